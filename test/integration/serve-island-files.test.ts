import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dev } from 'astro';
import { modelFiles, runtimeFiles } from '../../integration/island-files.ts';
import { copyFixture, type FixtureSite } from '../helpers/fixture-site.ts';
import { ensureTestModels } from '../models/make-models.ts';

type DevServer = Awaited<ReturnType<typeof dev>>;

// Sends the path exactly as written: fetch would resolve `..` segments before they reach the server.
function get(origin: string, path: string): Promise<{ status: number; type: string | undefined; body: Buffer }> {
	return new Promise((resolve, reject) => {
		request(`${origin}${path}`, { path }, (response) => {
			const chunks: Buffer[] = [];
			response.on('data', (chunk: Buffer) => chunks.push(chunk));
			response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body: Buffer.concat(chunks) }));
			response.on('error', reject);
		})
			.on('error', reject)
			.end();
	});
}

describe('the island files under astro dev', () => {
	let site: FixtureSite;
	let server: DevServer;
	let origin: string;
	let e5: string;
	const saved = process.env.CONCIERGE_TEST_E5;

	before(async () => {
		({ e5 } = await ensureTestModels());
		// The fixture's config reads the model from the environment; dev() loads it in this process.
		process.env.CONCIERGE_TEST_E5 = e5;
		site = await copyFixture('island-plumbing');
		server = await dev({ root: site.dir, server: { port: 0, host: '127.0.0.1' }, logLevel: 'error' });
		origin = `http://127.0.0.1:${server.address.port}`;
	});

	after(async () => {
		await server?.stop();
		await site?.remove();
		if (saved === undefined) delete process.env.CONCIERGE_TEST_E5;
		else process.env.CONCIERGE_TEST_E5 = saved;
	});

	test('answers no_kb with a message the island can show before the first build', async () => {
		const response = await get(origin, '/docs/concierge/kb.json');
		assert.equal(response.status, 404);
		assert.match(response.type ?? '', /^application\/json/);
		const body = JSON.parse(response.body.toString()) as { error: string; message: string };
		assert.equal(body.error, 'no_kb');
		assert.match(body.message, /run astro build once .*\.concierge\/kb\.json/);
	});

	test('serves the last good kb.json from beside the bundle', async () => {
		const kb = Buffer.from('{"format":"astro-concierge/kb","stand-in":true}');
		await mkdir(join(site.dir, '.concierge'), { recursive: true });
		await writeFile(join(site.dir, '.concierge', 'kb.json'), kb);
		const response = await get(origin, '/docs/concierge/kb.json');
		assert.equal(response.status, 200);
		assert.match(response.type ?? '', /^application\/json/);
		assert.deepEqual(response.body, kb);
	});

	test('serves the runtime files from node_modules with the types browsers require', async () => {
		const types: Record<string, RegExp> = { js: /^text\/javascript/, mjs: /^text\/javascript/, wasm: /^application\/wasm$/ };
		for (const [name, source] of runtimeFiles()) {
			const response = await get(origin, `/docs/concierge/runtime/${name}`);
			assert.equal(response.status, 200, name);
			assert.match(response.type ?? '', types[name.split('.').at(-1)!]!, name);
			assert.ok(response.body.equals(await readFile(source)), `${name} differs from its source`);
		}
	});

	test('serves the model files from the model folder', async () => {
		const model = modelFiles({ model: e5, dtype: 'q8', cacheDir: '.concierge/cache' }, site.dir);
		assert.deepEqual(model.files.sort(), ['config.json', 'onnx/model_quantized.onnx', 'tokenizer.json', 'tokenizer_config.json']);
		for (const file of model.files) {
			const response = await get(origin, `/docs/concierge/models/tiny-e5/${file}`);
			assert.equal(response.status, 200, file);
			assert.match(response.type ?? '', file.endsWith('.onnx') ? /^application\/octet-stream$/ : /^application\/json/, file);
			assert.ok(response.body.equals(await readFile(join(e5, file))), `${file} differs from its source`);
		}
	});

	test('refuses paths that climb out of its folders and files it does not list', async () => {
		for (const path of [
			'/docs/concierge/runtime/..%2f..%2f..%2fastro.config.mjs',
			'/docs/concierge/models/tiny-e5/..%2f..%2f..%2f..%2fastro.config.mjs',
			'/docs/concierge/models/tiny-e5/onnx/..%2f..%2f..%2f..%2f..%2fastro.config.mjs',
			// Real files beside the listed ones: another dtype's weights, the rest of onnxruntime-web.
			'/docs/concierge/models/tiny-e5/onnx/model.onnx',
			'/docs/concierge/runtime/ort.min.js',
		]) {
			const response = await get(origin, path);
			assert.equal(response.status, 404, path);
			assert.deepEqual(JSON.parse(response.body.toString()).error, 'not_found', path);
		}
	});

	test('gives the pages the island config with dev on and the launcher beside the integration', async () => {
		const config = await get(origin, '/@id/__x00__virtual:astro-concierge/config');
		assert.equal(config.status, 200);
		assert.match(config.body.toString(), /"assetsUrl":"\/docs\/concierge\/".*"dev":true/);
		const start = await get(origin, '/@id/__x00__virtual:astro-concierge/start');
		const launcher = /import \{ startConcierge \} from "([^"]+)"/.exec(start.body.toString())?.[1];
		assert.ok(launcher, start.body.toString());
		assert.equal((await get(origin, launcher)).status, 200);
	});
});
