import assert from 'node:assert/strict';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ChromaClient } from 'chromadb';
import { readBundle, type BundleChunk } from '../../integration/bundle.ts';
import { createEmbedder } from '../../integration/create-embedder.ts';
import { parseArticle } from '../../integration/parse-article.ts';
import { readPageHeadings } from '../../integration/read-page-headings.ts';
import { readKb, searchKb, type Kb } from '../../integration/runtime/kb.ts';
import { startChromaServer, type ChromaServer } from '../../sidecar/chroma-server.ts';
import { buildSite, copyFixture, type FixtureSite } from '../helpers/fixture-site.ts';
import { ensureTestModels } from '../models/make-models.ts';

const collectionName = 'astro-concierge';

interface Snapshot {
	bundle: Buffer;
	lastKb: Buffer;
	chromaIds: string[];
	chromaVersion: unknown;
}

// One fixture site, built once with the 384-wide tiny model and a real Chroma server, then changed and
// rebuilt by the later tests in order: the rebuild and failure tests depend on the state the first build left.
describe('building the knowledge base of a site', () => {
	let site: FixtureSite;
	let chromaDir: string;
	let chroma: ChromaServer;
	let client: ChromaClient;
	let env: Record<string, string>;
	let firstLog: string;
	let kb: Kb;
	let bundle: { chunks: BundleChunk[]; header: { contentVersion: string } };

	const file = (path: string) => join(site.dir, path);
	const chromaState = async () => {
		const collection = await client.getCollection({ name: collectionName });
		const all = await collection.get({ include: [] });
		return { ids: [...all.ids].sort(), version: collection.metadata?.contentVersion, collection };
	};
	const snapshot = async (): Promise<Snapshot> => {
		const state = await chromaState();
		return {
			bundle: await readFile(file('.concierge/bundle.jsonl')),
			lastKb: await readFile(file('.concierge/kb.json')),
			chromaIds: state.ids,
			chromaVersion: state.version,
		};
	};

	before(async () => {
		const models = await ensureTestModels();
		chromaDir = await mkdtemp(join(tmpdir(), 'concierge-kb-chroma-'));
		chroma = await startChromaServer({ path: chromaDir, port: 0 });
		client = new ChromaClient({ host: chroma.host, port: chroma.port });
		site = await copyFixture('kb-site');
		env = { CONCIERGE_TEST_E5: models.e5Wide, CHROMA_URL: chroma.url };
		const built = await buildSite(site.dir, env);
		firstLog = built.log;
		assert.equal(built.code, 0, built.log);
		kb = readKb(await readFile(file('dist/concierge/kb.json'), 'utf8'));
		bundle = await readBundle(file('.concierge/bundle.jsonl'));
	});

	after(async () => {
		await chroma?.close();
		await site?.remove();
		if (chromaDir) await rm(chromaDir, { recursive: true, force: true });
	});

	test('indexes every published article and logs counts, time and output paths', () => {
		const urls = new Set(kb.chunks.map((chunk) => chunk.url));
		assert.deepEqual([...urls].sort(), [
			'/%E6%97%A5%E6%9C%AC%E8%AA%9E/%E6%9D%B1%E4%BA%AC%E3%81%AE%E5%A4%A9%E6%B0%97/',
			'/blog/astro-routing/',
			'/blog/rice-cooking/',
			'/guides/docker-volumes/',
			'/guides/install-node/',
			'/ja/keigo/',
			'/notes/components/',
		]);
		for (const chunk of kb.chunks) assert.match(chunk.id, new RegExp(`^${escape(chunk.url)}#\\d+$`));
		assert.match(firstLog, /7 articles to index \(2 drafts or opted out\) from 9 files/);
		assert.match(firstLog, new RegExp(`${kb.chunks.length} chunks from 7 articles \\(${kb.chunks.length} embedded, 0 reused\\) in [\\d.]+ s`));
		assert.match(firstLog, /wrote dist\/concierge\/kb\.json \(\d+ bytes\) and \.concierge\/bundle\.jsonl/);
	});

	test('gives chunks their title, heading path and the section anchors Astro rendered', () => {
		const check = kb.chunks.find((chunk) => chunk.heading === 'Check the node version {#check}');
		assert.ok(check, 'the heading with inline code and a literal {#check} is a section of its own');
		assert.equal(check.title, 'Installing Node.js on Linux');
		assert.equal(check.anchor, 'check-the-node-version-check');
		const rain = kb.chunks.find((chunk) => chunk.heading === '梅雨の季節');
		assert.equal(rain?.anchor, '梅雨の季節');
		// Astro renders this heading with curly quotes, an en dash and an ellipsis (smartypants).
		const smart = kb.chunks.find((chunk) => chunk.heading.endsWith('Don\'t panic -- it\'s "only" the path...'));
		assert.equal(smart?.anchor, 'dont-panic--its-only-the-path');
		const mdx = kb.chunks.find((chunk) => chunk.heading === 'Passing props');
		assert.equal(mdx?.url, '/notes/components/');
	});

	test('links every chunk to an anchor that exists in its built page', async () => {
		for (const chunk of kb.chunks) {
			if (!chunk.anchor) continue;
			const page = await readFile(file(join('dist', decodeURI(chunk.url), 'index.html')), 'utf8');
			assert.ok(readPageHeadings(page).ids.has(chunk.anchor), `${chunk.id}: #${chunk.anchor} is not in its page`);
		}
	});

	test('keeps code, tables and lists as text and leaves HTML and JSX markup out', () => {
		const texts = bundle.chunks.map((chunk) => chunk.text).join('\n');
		assert.match(texts, /nvm install --lts/);
		assert.match(texts, /Named volume \| yes \| database files/);
		assert.match(texts, /npm --version prints the package manager release/);
		assert.match(texts, /Keep components small and pass the text in as children/);
		assert.doesNotMatch(texts, /<Note|kind="tip"|import Note|export const year/);
	});

	test('publishes no run of article text outside the article\'s own page', async () => {
		const publicFiles = await listFiles(file('dist'));
		const bodies = await articleBodies(site.dir);
		for (const { url, text } of bodies) {
			const ownPage = join(file('dist'), decodeURI(url), 'index.html');
			for (const path of publicFiles) {
				if (path === ownPage) continue;
				const raw = (await readFile(path)).toString('utf8');
				// kb.json escapes non-ASCII characters, so its strings are compared as they read once parsed.
				const content = normalise(path.endsWith('.json') ? JSON.stringify(JSON.parse(raw)) : raw);
				const leaked = windows(text).find((window) => content.includes(window));
				assert.equal(leaked, undefined, `${relative(site.dir, path)} contains text of ${url}: "${leaked}"`);
			}
		}
	});

	test('keeps drafts and opted-out articles out of kb.json, the bundle and Chroma', async () => {
		const kbText = JSON.stringify(JSON.parse(await readFile(file('dist/concierge/kb.json'), 'utf8')));
		const bundleText = await readFile(file('.concierge/bundle.jsonl'), 'utf8');
		const { collection } = await chromaState();
		const stored = await collection.get({ include: ['documents', 'metadatas'] });
		const chromaText = JSON.stringify(stored);
		for (const secret of ['zeppelin', 'marmalade', 'Unannounced', 'secret-plan', 'hedgehog', 'opted-out', 'Not for the concierge']) {
			assert.ok(!kbText.includes(secret), `kb.json mentions ${secret}`);
			assert.ok(!bundleText.includes(secret), `the bundle mentions ${secret}`);
			assert.ok(!chromaText.includes(secret), `Chroma holds ${secret}`);
		}
	});

	test('leaves Chroma holding exactly the chunks of kb.json, with the bundle header as metadata', async () => {
		const { ids, version, collection } = await chromaState();
		assert.deepEqual(ids, kb.chunks.map((chunk) => chunk.id).sort());
		assert.equal(version, kb.contentVersion);
		assert.equal(bundle.header.contentVersion, kb.contentVersion);
		assert.equal(collection.metadata?.model, 'tiny-e5-384');
		const stored = await collection.get({ ids: [bundle.chunks[0]!.id], include: ['documents'] });
		assert.equal(stored.documents[0], bundle.chunks[0]!.text);
	});

	test('writes kb.json whose decoded vectors rank like the bundle\'s full ones', async () => {
		const models = await ensureTestModels();
		const embedder = await createEmbedder({ model: models.e5Wide, dtype: 'q8' });
		try {
			const questions = [
				'How do I check the node version?',
				'Which Docker mount keeps database files?',
				'梅雨の洗濯物はどうする？',
				'メールで使う敬語',
				'ご飯を蒸らす時間',
				'How do trailing slashes work in Astro?',
			];
			const queries = await embedder.embedQueries(questions);
			for (const [i, query] of queries.entries()) {
				const exact = bundle.chunks
					.map((chunk) => ({ id: chunk.id, score: dot(query, chunk.embedding) }))
					.sort((a, b) => b.score - a.score);
				const compact = searchKb(kb, query, { topK: kb.chunks.length, maxDistance: 2 });
				assert.equal(compact[0]!.chunk.id, exact[0]!.id, `"${questions[i]}" ranks another chunk first from kb.json`);
				for (const match of compact) {
					const full = 1 - exact.find((item) => item.id === match.chunk.id)!.score;
					assert.ok(Math.abs(match.distance - full) < 0.01, `${match.chunk.id}: distance ${match.distance} vs ${full}`);
				}
			}
		} finally {
			await embedder.dispose();
		}
	});

	test('a rebuild of unchanged articles takes them from the cache and writes what a build without the cache writes', async () => {
		const first = await snapshot();
		const cached = await buildSite(site.dir, env);
		assert.equal(cached.code, 0, cached.log);
		assert.doesNotMatch(cached.log, /embedding \d+ chunks/);
		assert.deepEqual(await snapshot(), first);
		await rm(file('.concierge/cache'), { recursive: true, force: true });
		const cold = await buildSite(site.dir, env);
		assert.equal(cold.code, 0, cold.log);
		assert.match(cold.log, new RegExp(`embedding ${kb.chunks.length} chunks \\(0 reused from the cache\\)`));
		assert.deepEqual(await snapshot(), first);
	});

	test('a rebuild with one article changed embeds only that article and keeps every other id', async () => {
		const before = new Set(kb.chunks.map((chunk) => chunk.id));
		const path = file('src/pages/guides/docker-volumes.md');
		const source = await readFile(path, 'utf8');
		await writeFile(path, source.replace('write a tar archive', 'write a compressed tar archive with a date in its name'));
		const rebuilt = await buildSite(site.dir, env);
		assert.equal(rebuilt.code, 0, rebuilt.log);
		const next = readKb(await readFile(file('dist/concierge/kb.json'), 'utf8'));
		const changed = next.chunks.filter((chunk) => chunk.url === '/guides/docker-volumes/');
		const changedTexts = (await readBundle(file('.concierge/bundle.jsonl'))).chunks.filter((chunk) =>
			chunk.id.startsWith('/guides/docker-volumes/#'),
		);
		const embeddedNow = changedTexts.filter((chunk) => !bundle.chunks.some((old) => old.id === chunk.id && old.text === chunk.text));
		assert.ok(embeddedNow.length >= 1);
		assert.match(rebuilt.log, new RegExp(`embedding ${embeddedNow.length} chunks \\(${next.chunks.length - embeddedNow.length} reused from the cache\\)`));
		for (const id of before) if (!id.startsWith('/guides/docker-volumes/')) assert.ok(next.chunks.some((chunk) => chunk.id === id), `${id} was lost`);
		assert.ok(changed.length > 0);
		assert.notEqual(next.contentVersion, kb.contentVersion);
		const { ids, version } = await chromaState();
		assert.deepEqual(ids, next.chunks.map((chunk) => chunk.id).sort());
		assert.equal(version, next.contentVersion);
		assert.match(rebuilt.log, new RegExp(`Chroma collection astro-concierge: ${embeddedNow.length === changed.length ? changed.length : '\\d+'} upserted, 0 deleted`));
	});

	test('a broken article stops the build with its file and line, and nothing published changes', async () => {
		const previous = await snapshot();
		// Malformed YAML would stop Astro itself before the integration runs; a bad concierge key reaches us.
		await writeFile(file('src/pages/guides/broken.md'), '---\ntitle: Broken\nconcierge: sometimes\n---\n\n# Broken\n\nSome text.\n');
		await writeFile(file('src/pages/guides/empty.md'), '---\ntitle: Empty\n---\n');
		try {
			const failed = await buildSite(site.dir, env);
			assert.notEqual(failed.code, 0);
			assert.match(failed.log, /src\/pages\/guides\/broken\.md:3: /);
			assert.match(failed.log, /src\/pages\/guides\/empty\.md: empty article/);
			assert.match(failed.log, /nothing was published/);
			const { ids, version } = await chromaState();
			assert.deepEqual(ids, previous.chromaIds);
			assert.equal(version, previous.chromaVersion);
			assert.deepEqual(await readFile(file('.concierge/bundle.jsonl')), previous.bundle);
			assert.deepEqual(await readFile(file('.concierge/kb.json')), previous.lastKb);
			await assert.rejects(readFile(file('dist/concierge/kb.json')), { code: 'ENOENT' });
		} finally {
			await rm(file('src/pages/guides/broken.md'));
			await rm(file('src/pages/guides/empty.md'));
		}
	});

	test('an unbuilt page and a duplicate URL are reported by file name, and onError warn skips them', async () => {
		await writeFile(file('src/content/blog/elsewhere.md'), '---\ntitle: Elsewhere\nurl: /nowhere/\n---\n\nA page nobody built.\n');
		await writeFile(file('src/content/blog/twin.md'), '---\ntitle: Twin\nurl: /guides/install-node/\n---\n\nAnother article with the same address.\n');
		try {
			const failed = await buildSite(site.dir, env);
			assert.notEqual(failed.code, 0);
			assert.match(failed.log, /src\/content\/blog\/elsewhere\.md: its page \/nowhere\/ was not built/);
			assert.match(failed.log, /src\/content\/blog\/twin\.md and src\/pages\/guides\/install-node\.md have the same URL \/guides\/install-node\//);

			const warned = await buildSite(site.dir, { ...env, CONCIERGE_TEST_ON_ERROR: 'warn' });
			assert.equal(warned.code, 0, warned.log);
			assert.match(warned.log, /\[WARN\] \[astro-concierge:kb\] src\/content\/blog\/elsewhere\.md: its page/);
			const partial = readKb(await readFile(file('dist/concierge/kb.json'), 'utf8'));
			const urls = new Set(partial.chunks.map((chunk) => chunk.url));
			assert.ok(!urls.has('/nowhere/') && !urls.has('/guides/install-node/'));
			assert.ok(urls.has('/guides/docker-volumes/'));
		} finally {
			await rm(file('src/content/blog/elsewhere.md'));
			await rm(file('src/content/blog/twin.md'));
		}
	});

	test('an unreachable Chroma stops the build and leaves the bundle and kb.json as they were', async () => {
		const previous = await snapshot();
		const failed = await buildSite(site.dir, { ...env, CHROMA_URL: 'http://127.0.0.1:9' });
		assert.notEqual(failed.code, 0);
		assert.match(failed.log, /could not update Chroma: Chroma at http:\/\/127\.0\.0\.1:9 is unreachable/);
		assert.deepEqual(await readFile(file('.concierge/bundle.jsonl')), previous.bundle);
		assert.deepEqual(await readFile(file('.concierge/kb.json')), previous.lastKb);
	});
});

function escape(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function dot(a: Float32Array, b: readonly number[]): number {
	let sum = 0;
	for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
	return sum;
}

async function listFiles(dir: string): Promise<string[]> {
	const entries = await readdir(dir, { recursive: true, withFileTypes: true });
	return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Section text of every indexed article of the fixture, as the parser sees it. */
async function articleBodies(dir: string): Promise<{ url: string; text: string }[]> {
	const kb = readKb(await readFile(join(dir, 'dist/concierge/kb.json'), 'utf8'));
	const sources = (await listFiles(join(dir, 'src'))).filter((path) => /\.mdx?$/.test(path));
	const bodies: { url: string; text: string }[] = [];
	for (const source of sources) {
		const parsed = parseArticle(await readFile(source), source);
		const url = kb.chunks.find((chunk) => chunk.title === parsed.title)?.url;
		if (!url) continue;
		bodies.push({ url, text: normalise(parsed.sections.map((section) => section.text).join(' ')) });
	}
	return bodies;
}

function normalise(text: string): string {
	return text.replace(/\s+/g, ' ');
}

/**
 * Overlapping pieces of a text such that any leaked run of 30 characters (15 in Japanese) contains one:
 * pieces of 20 characters every 10 (10 every 5 in Japanese).
 */
function windows(text: string): string[] {
	const japanese = /[\u3040-\u30ff\u4e00-\u9fff]/.test(text);
	const [size, step] = japanese ? [10, 5] : [20, 10];
	const pieces: string[] = [];
	for (let start = 0; start + size <= text.length; start += step) pieces.push(text.slice(start, start + size));
	return pieces;
}
