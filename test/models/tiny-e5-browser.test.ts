import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createEmbedder } from '../../integration/create-embedder.ts';
import { E5_QUERY_PREFIX } from '../../integration/runtime/e5.ts';
import { launchChromium } from '../helpers/browser.ts';
import { cosine } from '../helpers/kb-vectors.ts';
import { startStaticServer, type StaticServer } from '../helpers/static-server.ts';
import { ensureTestModels } from './make-models.ts';
import { PASSAGES } from './passages.ts';

const require = createRequire(import.meta.url);
const transformersEntry = require.resolve('@huggingface/transformers');
const transformersDist = dirname(transformersEntry);
// The wasm files must be those of the onnxruntime-web that this Transformers.js was built against.
const ortDist = dirname(createRequire(transformersEntry).resolve('onnxruntime-web'));
const fixture = fileURLToPath(new URL('../fixtures/browser-embed/', import.meta.url));

// The browser embeds the visitor's question and compares it with vectors made by Node at build time,
// so both sides must turn the same text into the same vector from the same files.
describe('tiny-e5 in Chromium through Transformers.js on WASM', () => {
	let browser: Browser;
	let server: StaticServer;
	let page: Page;
	let modelsDir: string;
	const requested: string[] = [];

	before(async () => {
		const models = await ensureTestModels();
		modelsDir = dirname(models.e5);
		server = await startStaticServer({
			'/': fixture,
			'/transformers/': transformersDist,
			'/ort/': ortDist,
			'/models/': modelsDir,
		});
		browser = await launchChromium();
		page = await browser.newPage();
		page.on('request', (request) => requested.push(request.url()));
		await page.goto(`${server.url}/`);
		await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
	});

	after(async () => {
		await browser?.close();
		await server?.close();
	});

	for (const dtype of ['fp32', 'q8'] as const) {
		test(`gives the vectors Node gives for the same queries in ${dtype}`, async () => {
			const texts = PASSAGES.map((item) => E5_QUERY_PREFIX + item.query);
			const inBrowser = await page.evaluate(
				([model, dtype, texts]) =>
					(window as unknown as { embedQueries: (m: string, d: string, t: string[]) => Promise<number[][]> }).embedQueries(
						model,
						dtype,
						texts,
					),
				['tiny-e5', dtype, texts] as const,
			);
			const embedder = await createEmbedder({ model: join(modelsDir, 'tiny-e5'), dtype });
			try {
				assert.equal(inBrowser.length, PASSAGES.length);
				const passages = await embedder.embedPassages(PASSAGES.map((item) => item.passage));
				for (const [i, item] of PASSAGES.entries()) {
					// One question at a time, as a visitor asks: q8's activation scale depends on the batch.
					const [inNode] = await embedder.embedQueries([item.query]);
					const browserVector = inBrowser[i]!;
					assert.equal(browserVector.length, embedder.dimension);
					const similarity = cosine(browserVector, inNode!);
					assert.ok(similarity > 0.9999, `${item.id}: browser and Node vectors differ (cosine ${similarity})`);
					const ranked = passages
						.map((vector, index) => ({ index, score: cosine(browserVector, vector) }))
						.sort((a, b) => b.score - a.score);
					assert.equal(PASSAGES[ranked[0]!.index]!.id, item.id, `${item.id}: the browser's query vector ranks another passage first`);
				}
			} finally {
				await embedder.dispose();
			}
		});
	}

	test('loads the runtime and the model from the page origin only', async () => {
		assert.ok(server.requests.some((path) => path.startsWith('/ort/') && path.endsWith('.wasm')), 'no wasm file was served');
		assert.ok(server.requests.includes('/models/tiny-e5/onnx/model_quantized.onnx'));
		const elsewhere = requested.filter((url) => !url.startsWith(`${server.url}/`));
		assert.deepEqual(elsewhere, []);
	});
});
