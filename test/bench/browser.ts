// kb.json in headless Chromium, inside a module Web Worker as the island runs it: the time from the file's bytes
// in memory to a searchable index (against JSON.parse of the seeds' format), and the time per search.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { join } from 'node:path';
import { encodeKb } from '../../integration/encode-kb.ts';
import { launchChromium } from '../helpers/browser.ts';
import { seedFormat } from '../helpers/kb-vectors.ts';
import { startStaticServer } from '../helpers/static-server.ts';
import { generateCorpus } from './corpus.ts';

const runtimeFiles = ['kb.ts', 'score-int8.ts'];

// Runs in the worker. Each timing brackets only the work named; fetching is done before the clock starts.
const WORKER = `
import { readKb, searchKb } from './runtime/kb.js';
import { createInt8Scorer } from './runtime/score-int8.js';

const bytesOf = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
const time = (work) => { const started = performance.now(); const value = work(); return [performance.now() - started, value]; };
const options = { topK: 10, maxDistance: 2 };

const handlers = {
	async load({ ours, seeds, repeats }) {
		const [oursBytes, seedsBytes] = await Promise.all([bytesOf(ours), bytesOf(seeds)]);
		const oursMs = [];
		const seedsMs = [];
		for (let i = 0; i < repeats; i++) {
			const [readMs, kb] = time(() => readKb(new TextDecoder().decode(oursBytes)));
			const [parseMs, parsed] = time(() => JSON.parse(new TextDecoder().decode(seedsBytes)));
			if (kb.chunks.length !== parsed.chunks.length) throw new Error('the two files hold different numbers of chunks');
			oursMs.push(readMs);
			seedsMs.push(parseMs);
		}
		return { oursMs, seedsMs };
	},
	async search({ url, queries, plainQueries }) {
		const kb = readKb(new TextDecoder().decode(await bytesOf(url)));
		const vectors = queries.map((query) => Float32Array.from(query));
		for (let i = 0; i < 30; i++) searchKb(kb, vectors[i % vectors.length], options);
		const searchMs = vectors.map((query) => time(() => searchKb(kb, query, options))[0]);
		// A Kb whose index is a fresh object has no kernel, so this is kb.ts's plain JavaScript loop.
		const plain = { ...kb, index: { ...kb.index } };
		for (let i = 0; i < 3; i++) searchKb(plain, vectors[i], options);
		const plainMs = vectors.slice(0, plainQueries).map((query) => time(() => searchKb(plain, query, options))[0]);
		// The bound: one SIMD pass summing the same code bytes, in a memory of the same size.
		const scorer = createInt8Scorer(kb.chunks.length, kb.dimension);
		scorer.codes.set(kb.index.codes);
		for (let i = 0; i < 30; i++) scorer.absoluteSums();
		const boundMs = vectors.map(() => time(() => scorer.absoluteSums())[0]);
		const same = vectors.slice(0, plainQueries).every((query) =>
			JSON.stringify(searchKb(kb, query, options)) === JSON.stringify(searchKb(plain, query, options)));
		return { chunks: kb.chunks.length, searchMs, plainMs, boundMs, same, inWorker: typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope, isolated: self.crossOriginIsolated };
	},
};

self.onmessage = async ({ data }) => {
	try {
		self.postMessage({ id: data.id, ok: true, value: await handlers[data.type](data) });
	} catch (error) {
		self.postMessage({ id: data.id, ok: false, error: String(error && error.stack || error) });
	}
};
`;

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>kb.json benchmark</title>
<script type="module">
const worker = new Worker('./bench-worker.js', { type: 'module' });
const pending = new Map();
let next = 0;
worker.onmessage = ({ data }) => {
	const call = pending.get(data.id);
	pending.delete(data.id);
	if (data.ok) call.resolve(data.value);
	else call.reject(new Error(data.error));
};
worker.onerror = (event) => { window.workerError = String(event.message || 'the worker failed to load'); };
window.bench = (message) => new Promise((resolve, reject) => {
	const id = ++next;
	pending.set(id, { resolve, reject });
	worker.postMessage({ ...message, id });
});
window.ready = true;
</script>
`;

export interface LoadFigures {
	chunks: number;
	oursBytes: number;
	seedsBytes: number;
	oursMs: number[];
	seedsMs: number[];
}

export interface SearchFigures {
	chunks: number;
	searchMs: number[];
	plainMs: number[];
	boundMs: number[];
	same: boolean;
	inWorker: boolean;
	isolated: boolean;
}

export interface BrowserFigures {
	chromium: string;
	load: LoadFigures[];
	search: SearchFigures[];
}

/**
 * Writes the knowledge bases and a page with its worker to `dir`, serves them cross-origin isolated (so the
 * worker's clock has microsecond resolution, not Chromium's coarsened 100 µs), and measures in Chromium.
 */
export async function measureInBrowser(dir: string, sizes: { load: number[]; search: number[] }): Promise<BrowserFigures> {
	await mkdir(join(dir, 'runtime'), { recursive: true });
	for (const file of runtimeFiles) {
		const source = await readFile(new URL(`../../integration/runtime/${file}`, import.meta.url), 'utf8');
		const script = stripTypeScriptTypes(source, { mode: 'strip' }).replace(/from '\.\/([\w-]+)\.ts'/g, "from './$1.js'");
		await writeFile(join(dir, 'runtime', file.replace(/\.ts$/, '.js')), script);
	}
	await writeFile(join(dir, 'bench-worker.js'), WORKER);
	await writeFile(join(dir, 'index.html'), PAGE);

	const queries = new Map<number, Float32Array[]>();
	const loadFiles = new Map<number, { oursBytes: number; seedsBytes: number }>();
	for (const chunks of new Set([...sizes.load, ...sizes.search])) {
		const corpus = generateCorpus('e5-like', chunks, 200, 40 + chunks);
		const ours = encodeKb(corpus.input);
		await writeFile(join(dir, `kb-${chunks}.json`), ours);
		queries.set(chunks, corpus.queries);
		if (sizes.load.includes(chunks)) {
			const seeds = seedFormat(corpus.input);
			await writeFile(join(dir, `seeds-${chunks}.json`), seeds);
			loadFiles.set(chunks, { oursBytes: Buffer.byteLength(ours), seedsBytes: Buffer.byteLength(seeds) });
		}
	}

	const server = await startStaticServer(
		{ '/': dir },
		{ 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' },
	);
	const browser = await launchChromium();
	try {
		const page = await browser.newPage();
		await page.goto(`${server.url}/`);
		await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
		const call = async <T>(message: Record<string, unknown>): Promise<T> => {
			const failed = await page.evaluate(() => (window as unknown as { workerError?: string }).workerError);
			if (failed) throw new Error(`the benchmark worker failed: ${failed}`);
			return page.evaluate((body) => (window as unknown as { bench: (m: unknown) => Promise<unknown> }).bench(body), message) as Promise<T>;
		};
		const load: LoadFigures[] = [];
		for (const chunks of sizes.load) {
			const figures = await call<{ oursMs: number[]; seedsMs: number[] }>({
				type: 'load',
				ours: `kb-${chunks}.json`,
				seeds: `seeds-${chunks}.json`,
				repeats: 7,
			});
			load.push({ chunks, ...loadFiles.get(chunks)!, ...figures });
		}
		const search: SearchFigures[] = [];
		for (const chunks of sizes.search) {
			const vectors = queries.get(chunks)!;
			search.push(
				await call<SearchFigures>({
					type: 'search',
					url: `kb-${chunks}.json`,
					queries: vectors.map((vector) => Array.from(vector)),
					plainQueries: chunks >= 100_000 ? 10 : 40,
				}),
			);
		}
		return { chromium: browser.version(), load, search };
	} finally {
		await browser.close();
		await server.close();
	}
}
