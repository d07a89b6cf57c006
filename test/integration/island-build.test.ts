import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MODELS_FOLDER, modelFiles, RUNTIME_FOLDER, runtimeFiles } from '../../integration/island-files.ts';
import { LAUNCHER_OFF_MARKER } from '../../integration/mark-launcher-off.ts';
import { ISLAND_TAG } from '../../integration/runtime/island-config.ts';
import { buildSite, copyFixture, type FixtureSite } from '../helpers/fixture-site.ts';
import { ensureTestModels } from '../models/make-models.ts';

const base = '/docs/';
// A suggestion set in the fixture's config: it reaches the page only inside the island config module.
const suggestion = 'How do I install it?';

interface Built {
	site: FixtureSite;
	log: string;
	dist: string;
	page(path: string): Promise<string>;
	/** Every JavaScript file the page loads, following static and dynamic imports, by path under dist. */
	scripts(path: string): Promise<Map<string, string>>;
}

async function build(env: Record<string, string>): Promise<Built> {
	const site = await copyFixture('island-plumbing');
	const built = await buildSite(site.dir, env);
	assert.equal(built.code, 0, built.log);
	const dist = join(site.dir, 'dist');
	const page = (path: string) => readFile(join(dist, path, 'index.html'), 'utf8');
	const scripts = async (path: string) => {
		const html = await page(path);
		const found = new Map<string, string>();
		// Astro bundles page scripts into files under _astro/ rather than inlining them.
		const queue = [...html.matchAll(/<script type="module" src="([^"]+)"><\/script>/g)].map((match) => match[1]!.slice(base.length));
		while (queue.length) {
			const file = queue.pop()!;
			if (found.has(file)) continue;
			const code = await readFile(join(dist, file), 'utf8');
			found.set(file, code);
			queue.push(...imports(code, file));
		}
		return found;
	};
	return { site, log: built.log, dist, page, scripts };
}

// Rolldown writes relative specifiers between its chunks: `import"./a.js"`, `from"./b.js"`, `import("./c.js")`.
function imports(code: string, file: string): string[] {
	const folder = file.slice(0, file.lastIndexOf('/') + 1);
	return [...code.matchAll(/(?:\bimport|\bfrom)\s*\(?\s*["'`](\.\/[^"'`]+)["'`]/g)].map((match) => folder + match[1]!.slice(2));
}

async function filesUnder(dir: string): Promise<string[]> {
	const entries = await readdir(dir, { recursive: true, withFileTypes: true });
	return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name))).sort();
}

// Two builds of one fixture, run together: the defaults (launcher injected, files copied) and a search-only site
// that places the concierge itself and loads the model from another host.
describe('the island in a built site', () => {
	let injected: Built;
	let placed: Built;
	let e5: string;

	before(async () => {
		({ e5 } = await ensureTestModels());
		[injected, placed] = await Promise.all([
			build({ CONCIERGE_TEST_E5: e5 }),
			build({
				CONCIERGE_TEST_E5: e5,
				CONCIERGE_TEST_INJECT: 'false',
				CONCIERGE_TEST_ENDPOINT: 'false',
				CONCIERGE_TEST_MODEL_HOST: 'https://models.example/e5',
			}),
		]);
	});

	after(async () => {
		await injected?.site.remove();
		await placed?.site.remove();
	});

	const pages = ['', 'ask', 'guide', 'quiet', 'notes', 'private-notes', 'blog/quiet-entry'];

	test('injects a script into every page that bundles the island config and the launcher', async () => {
		for (const path of pages) {
			const code = [...(await injected.scripts(path)).values()].join('\n');
			assert.ok(code.includes(suggestion), `/${path}: the island config is not bundled`);
			assert.ok(code.includes(`${base}concierge/`), `/${path}: the assets URL under the base is missing`);
			assert.ok(code.includes(`${base}concierge/models/`), `/${path}: the models URL is missing`);
			assert.ok(code.includes(ISLAND_TAG), `/${path}: the launcher, which defines <${ISLAND_TAG}>, is not bundled`);
		}
	});

	test('evaluates the start module once on a page that both injects it and places <Concierge />', async () => {
		const html = await injected.page('ask');
		assert.equal(html.split(`<${ISLAND_TAG} data-placement="inline"></${ISLAND_TAG}>`).length, 2);
		const holding = [...(await injected.scripts('ask'))].filter(([, code]) => code.includes(suggestion)).map(([file]) => file);
		assert.equal(holding.length, 1, `the island config is in ${holding.join(', ')}`);
	});

	test('marks the .md, .mdx and collection pages that turn the launcher off, and only those', async () => {
		for (const path of ['quiet', 'private-notes', 'blog/quiet-entry']) {
			assert.equal((await injected.page(path)).split(LAUNCHER_OFF_MARKER).length, 2, `/${path} has no marker, or more than one`);
		}
		for (const path of ['', 'ask', 'guide', 'notes']) {
			assert.ok(!(await injected.page(path)).includes('data-concierge-launcher'), `/${path} is marked`);
		}
	});

	test('copies exactly the runtime files the browser loads, byte for byte, and logs them', async () => {
		const runtimeDir = join(injected.dist, RUNTIME_FOLDER);
		const runtime = runtimeFiles();
		assert.deepEqual(await filesUnder(runtimeDir), [...runtime.keys()].sort());
		let bytes = 0;
		for (const [name, source] of runtime) {
			assert.deepEqual(await readFile(join(runtimeDir, name)), await readFile(source), name);
			bytes += (await stat(source)).size;
		}
		assert.match(injected.log, new RegExp(`\\[astro-concierge:island\\] copied 3 runtime files \\(${bytes} bytes\\) to dist/concierge/runtime/`));
	});

	test('copies the model files Transformers.js requests into a folder named as kb.json names the model', async () => {
		const kb = JSON.parse(await readFile(join(injected.dist, 'concierge', 'kb.json'), 'utf8')) as { model: string };
		const model = modelFiles({ model: e5, dtype: 'q8', cacheDir: '.concierge/cache' }, injected.site.dir);
		assert.equal(model.name, kb.model);
		const modelDir = join(injected.dist, MODELS_FOLDER, kb.model);
		assert.deepEqual(await filesUnder(modelDir), ['config.json', 'onnx/model_quantized.onnx', 'tokenizer.json', 'tokenizer_config.json']);
		for (const file of model.files) assert.deepEqual(await readFile(join(modelDir, file)), await readFile(join(e5, file)), file);
		assert.match(injected.log, /copied 4 files of model tiny-e5 \(\d+ bytes\) to dist\/concierge\/models\/tiny-e5\//);
	});

	test('with inject: false, only a page that places <Concierge /> loads the island', async () => {
		for (const path of ['', 'guide', 'quiet', 'notes']) {
			assert.doesNotMatch(await placed.page(path), /<script/, `/${path} has a script`);
		}
		const code = [...(await placed.scripts('ask')).values()].join('\n');
		assert.ok(code.includes(suggestion) && code.includes(ISLAND_TAG));
		assert.match(await placed.page('ask'), new RegExp(`<${ISLAND_TAG} data-placement="inline">`));
	});

	test('with modelHost, copies no model and points the island at the host', async () => {
		const code = [...(await placed.scripts('ask')).values()].join('\n');
		assert.ok(code.includes('https://models.example/e5/'));
		assert.ok(!code.includes(`${base}concierge/models/`));
		assert.equal(existsSync(join(placed.dist, MODELS_FOLDER)), false);
		assert.deepEqual(await filesUnder(join(placed.dist, RUNTIME_FOLDER)), [...runtimeFiles().keys()].sort());
		assert.match(placed.log, /model files are not copied: the island loads them from https:\/\/models\.example\/e5\//);
	});
});
