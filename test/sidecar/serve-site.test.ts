import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startChromaServer, type ChromaServer } from '../../sidecar/chroma-server.ts';
import { createSidecar, type Sidecar } from '../../sidecar/create-sidecar.ts';
import { CONCIERGE_PATH } from '../../sidecar/protocol.ts';
import { buildSite, copyFixture, type FixtureSite } from '../helpers/fixture-site.ts';
import { ensureTestModels } from '../models/make-models.ts';

// One process for pages and answers also holds for sites with pages rendered on demand.
describe('--site with an @astrojs/node build', () => {
	let site: FixtureSite;
	let dir: string;
	let chroma: ChromaServer;
	let sidecar: Sidecar;

	before(async () => {
		const models = await ensureTestModels();
		site = await copyFixture('ssr-site');
		const build = await buildSite(site.dir, { CONCIERGE_TEST_E5: models.e5 });
		assert.equal(build.code, 0, build.log);
		dir = await mkdtemp(join(tmpdir(), 'concierge-ssr-'));
		chroma = await startChromaServer({ path: join(dir, 'chroma'), port: 0 });
		sidecar = await createSidecar({
			model: models.llamaStops,
			threads: 1,
			port: 0,
			chroma: { url: chroma.url },
			bundle: join(site.dir, '.concierge', 'bundle.jsonl'),
			site: join(site.dir, 'dist'),
			qaLog: false,
			logger: { debug() {}, info() {}, warn() {}, error() {} },
		});
	});

	after(async () => {
		await sidecar?.close();
		await chroma?.close();
		if (dir) await rm(dir, { recursive: true, force: true });
		await site?.remove();
	});

	test('renders an on-demand page for each request', async () => {
		for (const name of ['Ada', 'Grace']) {
			const response = await fetch(`${sidecar.address}/hello?name=${name}`);
			assert.equal(response.status, 200);
			assert.match(await response.text(), new RegExp(`Hello, ${name}!`));
		}
	});

	test('serves the prerendered pages and the concierge files with their types', async () => {
		const page = await fetch(`${sidecar.address}/tea/`);
		assert.equal(page.status, 200);
		assert.match(await page.text(), /<script type="module" src="\/_astro\/page\.[\w-]+\.js">/);
		const kb = await fetch(`${sidecar.address}/concierge/kb.json`);
		assert.match(kb.headers.get('content-type') ?? '', /^application\/json/);
		assert.equal(((await kb.json()) as { format: string }).format, 'astro-concierge-kb');
		const wasm = await fetch(`${sidecar.address}/concierge/runtime/ort-wasm-simd-threaded.wasm`, { method: 'HEAD' });
		assert.equal(wasm.headers.get('content-type'), 'application/wasm');
		assert.equal((await fetch(`${sidecar.address}/no-such-page/`)).status, 404);
	});

	test('still answers on the WebSocket and /healthz', async () => {
		assert.equal((await fetch(`${sidecar.address}/healthz`)).status, 200);
		const socket = new WebSocket(`${sidecar.address.replace('http', 'ws')}${CONCIERGE_PATH}`);
		const hello = await new Promise<{ type: string }>((resolve, reject) => {
			socket.once('message', (data) => resolve(JSON.parse(String(data)) as { type: string }));
			socket.once('error', reject);
		});
		assert.equal(hello.type, 'hello');
		socket.close();
	});
});
