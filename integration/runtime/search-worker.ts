// The island's Web Worker: loads kb.json and the embedding model off the main thread, embeds the visitor's
// question exactly as the build embedded passages (same model files, dtype, pooling; kb.json's query prefix),
// and searches. Transformers.js is imported from the site's own files at run time, not bundled.

import type { FeatureExtractionPipeline, ProgressInfo } from '@huggingface/transformers';
import { readKb, searchKb, type Kb } from './kb.ts';

/** Main thread → worker. */
export type SearchWorkerRequest =
	| { type: 'load'; kbUrl: string; runtimeUrl: string; modelsUrl: string }
	| { type: 'search'; id: number; question: string }
	| { type: 'embed'; id: number; texts: string[] };

/** One result: a section of an article, with its cosine distance from the question. */
export interface SearchMatch {
	id: string;
	url: string;
	anchor: string;
	title: string;
	heading: string;
	distance: number;
}

/** Why loading stopped: no kb.json (dev before a build), a browser without WebAssembly, or anything else. */
export type SearchFailure = 'no_kb' | 'unsupported' | 'error';

/** Worker → main thread. */
export type SearchWorkerEvent =
	| { type: 'kb'; chunks: number; kbVersion: string }
	| { type: 'progress'; loaded: number; total: number }
	| { type: 'ready' }
	| { type: 'failed'; reason: SearchFailure; message: string }
	| { type: 'results'; id: number; matches: SearchMatch[]; kbVersion: string }
	| { type: 'embedded'; id: number; vectors: number[][] }
	| { type: 'error'; id: number; message: string };

type Transformers = typeof import('@huggingface/transformers');

// The project's lib is the DOM's; these are the few worker globals this file uses.
interface WorkerScope {
	location: Location;
	crossOriginIsolated: boolean;
	postMessage(message: SearchWorkerEvent): void;
	addEventListener(type: 'message', listener: (message: MessageEvent<SearchWorkerRequest>) => void): void;
}
const self = globalThis as unknown as WorkerScope;

let loading: Promise<{ kb: Kb; extractor: FeatureExtractionPipeline }> | undefined;

const post = (event: SearchWorkerEvent): void => self.postMessage(event);

self.addEventListener('message', (message: MessageEvent<SearchWorkerRequest>) => {
	const request = message.data;
	if (request.type === 'load') {
		loading ??= load(request);
		loading.then(
			() => post({ type: 'ready' }),
			(error: unknown) => {
				const failure = error instanceof LoadError ? error : new LoadError('error', describe(error));
				post({ type: 'failed', reason: failure.reason, message: failure.message });
			},
		);
		return;
	}
	if (!loading) {
		post({ type: 'error', id: request.id, message: 'search is not loaded yet' });
		return;
	}
	loading
		.then(async ({ kb, extractor }) => {
			if (request.type === 'search') {
				const [vector] = await embed(extractor, kb.queryPrefix, [request.question]);
				const matches = searchKb(kb, vector!).map(({ chunk, distance }) => ({ ...chunk, distance }));
				post({ type: 'results', id: request.id, matches, kbVersion: kb.contentVersion });
			} else {
				const vectors = await embed(extractor, kb.queryPrefix, request.texts);
				post({ type: 'embedded', id: request.id, vectors: vectors.map((vector) => Array.from(vector)) });
			}
		})
		.catch((error: unknown) => post({ type: 'error', id: request.id, message: describe(error) }));
});

class LoadError extends Error {
	readonly reason: SearchFailure;
	constructor(reason: SearchFailure, message: string) {
		super(message);
		this.reason = reason;
	}
}

async function load(request: Extract<SearchWorkerRequest, { type: 'load' }>): Promise<{ kb: Kb; extractor: FeatureExtractionPipeline }> {
	if (typeof WebAssembly !== 'object') throw new LoadError('unsupported', 'this browser has no WebAssembly');
	// The page passes paths; inside a worker they resolve against the worker script's URL, which is on the same site.
	const absolute = (url: string): string => new URL(url, self.location.href).href;
	const kb = await loadKb(absolute(request.kbUrl));
	post({ type: 'kb', chunks: kb.chunks.length, kbVersion: kb.contentVersion });
	const modelsUrl = absolute(request.modelsUrl);
	const runtimeUrl = absolute(request.runtimeUrl);
	const modelUrl = new URL(`${kb.model}/`, modelsUrl).href;
	await checkModelConfig(modelUrl);

	const transformers = (await import(/* @vite-ignore */ new URL('transformers.min.js', runtimeUrl).href)) as Transformers;
	const { env, pipeline } = transformers;
	env.allowLocalModels = false;
	env.allowRemoteModels = true;
	// Every file comes from modelsUrl, laid out as `<model>/<file>`: the site's own folder unless the owner set modelHost.
	env.remoteHost = modelsUrl;
	env.remotePathTemplate = '{model}/';
	// The plain (not asyncify) runtime: see island-files.ts. Without the wasm cache Transformers.js does not turn the
	// glue file into a blob: URL, which a strict CSP refuses; the browser's HTTP cache still keeps both files.
	env.useWasmCache = false;
	const wasm = env.backends.onnx.wasm!;
	wasm.wasmPaths = { mjs: `${runtimeUrl}ort-wasm-simd-threaded.mjs`, wasm: `${runtimeUrl}ort-wasm-simd-threaded.wasm` };
	// Threads need SharedArrayBuffer, which only a cross-origin isolated page has.
	wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;

	const files = new Map<string, { loaded: number; total: number }>();
	const extractor = await pipeline('feature-extraction', kb.model, {
		dtype: kb.dtype as 'fp32',
		device: 'wasm',
		progress_callback: (info: ProgressInfo) => {
			if (info.status !== 'progress' || !('file' in info)) return;
			files.set(info.file, { loaded: info.loaded, total: info.total });
			let loaded = 0;
			let total = 0;
			for (const file of files.values()) {
				loaded += file.loaded;
				total += file.total;
			}
			post({ type: 'progress', loaded, total });
		},
	});
	return { kb, extractor };
}

async function loadKb(url: string): Promise<Kb> {
	let response: Response;
	try {
		response = await fetch(url);
	} catch (error) {
		throw new LoadError('error', `kb.json could not be fetched from ${url} (${describe(error)})`);
	}
	if (response.status === 404) {
		const body = (await response.json().catch(() => null)) as { error?: string; message?: string } | null;
		if (body?.error === 'no_kb') throw new LoadError('no_kb', body.message ?? 'no kb.json yet');
		throw new LoadError('error', `kb.json is missing at ${url} (404)`);
	}
	if (!response.ok) throw new LoadError('error', `kb.json at ${url} answered ${response.status}`);
	return readKb(await response.text());
}

// Transformers.js would report a missing file served as an HTML page as a JSON syntax error; this names the URL.
async function checkModelConfig(modelUrl: string): Promise<void> {
	const url = `${modelUrl}config.json`;
	const response = await fetch(url).catch((error: unknown) => {
		throw new LoadError('error', `the model's config.json could not be fetched from ${url} (${describe(error)})`);
	});
	if (!response.ok) throw new LoadError('error', `the model file ${url} is missing (${response.status})`);
	try {
		JSON.parse(await response.text());
	} catch {
		const type = response.headers.get('content-type') ?? 'no content type';
		throw new LoadError('error', `the model file ${url} is not JSON (the server answered ${type})`);
	}
}

async function embed(extractor: FeatureExtractionPipeline, prefix: string, texts: string[]): Promise<Float32Array[]> {
	const vectors: Float32Array[] = [];
	// One text per run, as the build's parity tests compare: q8's activation scale depends on the batch.
	for (const text of texts) {
		const output = await extractor(prefix + text, { pooling: 'mean', normalize: true });
		vectors.push((output.data as Float32Array).slice());
		output.dispose();
	}
	return vectors;
}

function describe(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
