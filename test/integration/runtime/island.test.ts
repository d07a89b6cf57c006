import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { dev } from 'astro';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createEmbedder } from '../../../integration/create-embedder.ts';
import { encodeKb } from '../../../integration/encode-kb.ts';
import { E5_QUERY_PREFIX } from '../../../integration/runtime/e5.ts';
import { startChromaServer, type ChromaServer } from '../../../sidecar/chroma-server.ts';
import { createSidecar, type Sidecar } from '../../../sidecar/create-sidecar.ts';
import { createOpenAiProvider } from '../../../sidecar/openai-provider.ts';
import { launchChromium } from '../../helpers/browser.ts';
import { cosine } from '../../helpers/kb-vectors.ts';
import { buildSite, copyFixture, type FixtureSite } from '../../helpers/fixture-site.ts';
import { startOpenAiServer, type ScriptedEvent } from '../../helpers/openai-server.ts';
import { startStaticServer, type StaticServer } from '../../helpers/static-server.ts';
import { ensureTestModels, type TestModels } from '../../models/make-models.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const PANEL = '[data-astro-concierge-panel]';
const XSS_IMG = '<img src=x onerror="window.__xss=1">';

/** The island's pages in real Chromium, served by the real sidecar with real Chroma and tiny models. */
describe('the concierge island in Chromium', () => {
	let models: TestModels;
	let site: FixtureSite;
	let dir: string;
	let chroma: ChromaServer;
	let browser: Browser;
	const sidecars: Sidecar[] = [];
	const offOrigin: string[] = [];
	const violations: string[] = [];

	const startSidecar = (overrides: Partial<Parameters<typeof createSidecar>[0]> = {}): Promise<Sidecar> =>
		createSidecar({
			model: models.llamaStops,
			threads: 1,
			port: 0,
			chroma: { url: chroma.url },
			bundle: join(site.dir, '.concierge', 'bundle.jsonl'),
			embeddingModel: models.e5,
			site: join(site.dir, 'dist'),
			maxTokens: 48,
			// As the fixture's kb: the tiny model's matches sit further away than e5's.
			maxDistance: 0.6,
			temperature: 0,
			rateLimit: 0,
			qaLog: join(dir, 'qa.jsonl'),
			logger: quiet,
			...overrides,
		}).then((sidecar) => {
			sidecars.push(sidecar);
			return sidecar;
		});

	const scriptedModels: (() => Promise<void>)[] = [];
	/** A sidecar whose model is a scripted OpenAI-compatible server that streams `events` for every question. */
	const startScriptedSidecar = async (events: readonly ScriptedEvent[]): Promise<Sidecar> => {
		const openai = await startOpenAiServer(() => ({ events }));
		const provider = createOpenAiProvider({ baseUrl: openai.url, model: 'scripted', contextSize: 4096 });
		scriptedModels.push(async () => {
			await provider.dispose();
			await openai.close();
		});
		return startSidecar({ provider, model: undefined, maxTokens: 1000, qaLog: false });
	};

	/** A page of `sidecar`'s site (whose pages set a strict CSP), with every request and CSP violation recorded. */
	const openPage = async (sidecar: Sidecar): Promise<{ page: Page; context: BrowserContext; requests: string[] }> => {
		const context = await browser.newContext();
		const requests: string[] = [];
		context.on('request', (request) => {
			requests.push(request.url());
			if (!request.url().startsWith(`${sidecar.address}/`)) offOrigin.push(request.url());
		});
		const page = await context.newPage();
		page.on('console', (m) => process.env.DEBUG_ISLAND && console.log('[page]', m.text()));
		page.on('pageerror', (e) => process.env.DEBUG_ISLAND && console.log('[pageerror]', e.message));
		page.on('response', (r) => process.env.DEBUG_ISLAND && r.status() >= 400 && console.log('[404]', r.url()));
		await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
		await page.addInitScript(() => {
			document.addEventListener('securitypolicyviolation', (event) =>
				(window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber} ${event.sample}`),
			);
		});
		return { page, context, requests };
	};

	/** Opens the dialog with the launcher and waits until the browser can search. */
	const openConcierge = async (page: Page): Promise<void> => {
		await page.locator('astro-concierge button').click();
		await page.locator(`${PANEL} dialog[open]`).waitFor();
		await page
			.waitForFunction((panel) => document.querySelector(panel)?.getAttribute('data-search') === 'ready', PANEL, { timeout: 60_000 })
			.catch(async (error: Error) => {
				const state = await page.evaluate((panel) => [document.querySelector(panel)?.getAttribute('data-search'), document.querySelector(panel)?.shadowRoot?.querySelector('.progress')?.textContent], PANEL);
				throw new Error(`the in-browser search did not become ready: ${JSON.stringify(state)} (${error.message})`);
			});
	};

	/** Records, in the page, the order in which the last turn's source list and answer first appear. */
	const watchOrder = (page: Page): Promise<void> =>
		page.evaluate((panel) => {
			const root = document.querySelector(panel)!.shadowRoot!;
			const order: string[] = [];
			(window as unknown as { order: string[] }).order = order;
			const turns = root.querySelectorAll('.turn').length;
			new MutationObserver(() => {
				const turn = root.querySelectorAll('.turn')[turns];
				if (!turn) return;
				for (const [selector, name] of [['.sources li', 'sources'], ['.answer', 'answer']] as const) {
					if (turn.querySelector(selector) && !order.includes(name)) order.push(name);
				}
			}).observe(root, { childList: true, subtree: true });
		}, PANEL);

	const ask = async (page: Page, question: string): Promise<void> => {
		const input = page.locator(`${PANEL} textarea`);
		await input.fill(question);
		await input.press('Enter');
	};

	const lastTurn = (page: Page) => page.locator(`${PANEL} .turn`).last();

	const waitForAnnouncement = (page: Page, text: string): Promise<unknown> =>
		page.waitForFunction(
			([panel, text]) => document.querySelector(panel)?.shadowRoot?.querySelector('[role="status"]')?.textContent === text,
			[PANEL, text] as const,
			{ timeout: 60_000 },
		);

	before(async () => {
		models = await ensureTestModels();
		site = await copyFixture('island-site');
		const build = await buildSite(site.dir, { CONCIERGE_TEST_E5: models.e5 });
		assert.equal(build.code, 0, build.log);
		dir = await mkdtemp(join(tmpdir(), 'concierge-island-'));
		chroma = await startChromaServer({ path: join(dir, 'chroma'), port: 0 });
		browser = await launchChromium();
	});

	after(async () => {
		await browser?.close();
		for (const sidecar of sidecars) await sidecar.close();
		for (const dispose of scriptedModels) await dispose();
		await chroma?.close();
		if (dir) await rm(dir, { recursive: true, force: true });
		await site?.remove();
	});

	test('costs at most 10 KB of gzipped JavaScript and no other request when a page loads', async () => {
		const sidecar = await startSidecar();
		const { page, context } = await openPage(sidecar);
		const scripts: { url: string; gzip: number }[] = [];
		const loaded: string[] = [];
		page.on('response', async (response) => {
			loaded.push(new URL(response.url()).pathname);
			if (response.request().resourceType() === 'script') scripts.push({ url: response.url(), gzip: gzipSync(await response.body()).length });
		});
		await page.goto(`${sidecar.address}/plain/`, { waitUntil: 'networkidle' });
		await page.locator('astro-concierge button').waitFor();
		const total = scripts.reduce((sum, script) => sum + script.gzip, 0);
		assert.ok(scripts.length > 0, 'no script was loaded');
		assert.ok(total <= 10 * 1024, `page-load JavaScript is ${total} bytes gzipped: ${JSON.stringify(scripts)}`);
		assert.deepEqual(loaded.filter((path) => path.startsWith('/concierge/')), [], 'the launcher fetched concierge files before being opened');
		await context.close();
	});

	test('shows the matching articles before the first token, then streams an answer found by the browser', async () => {
		const sidecar = await startSidecar();
		const { page, context, requests } = await openPage(sidecar);
		await page.goto(`${sidecar.address}/en/sourdough/`);
		await openConcierge(page);
		await watchOrder(page);
		await ask(page, 'How do I brew green tea with water at the right temperature?');
		await waitForAnnouncement(page, 'Answer complete');

		const order = await page.evaluate(() => (window as unknown as { order: string[] }).order);
		assert.deepEqual(order, ['sources', 'answer']);
		const turn = lastTurn(page);
		assert.match((await turn.locator('.sources').textContent()) ?? '', /How to brew green tea/);
		assert.ok(((await turn.locator('.answer').textContent()) ?? '').includes('Hello world'));
		const log = (await readFile(join(dir, 'qa.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { mode: string });
		assert.equal(log.at(-1)!.mode, 'ids', 'the sidecar searched instead of the browser');

		// The runtime, the model and the worker really came from this site.
		const paths = requests.map((url) => new URL(url).pathname);
		assert.ok(paths.includes('/concierge/kb.json'));
		assert.ok(paths.some((path) => path.startsWith('/concierge/runtime/') && path.endsWith('.wasm')));
		assert.ok(paths.some((path) => path.startsWith('/concierge/models/') && path.endsWith('.onnx')));
		await context.close();
	});

	test('shows the queue position while another answer runs, and stops an answer when the visitor presses stop', async () => {
		// A remote model that streams slowly until stopped, so the second visitor really waits.
		const slow = Array.from({ length: 600 }, (_, i) => [{ content: `word${i} ` }, { delay: 50 }]).flat();
		const sidecar = await startScriptedSidecar(slow);
		const { page, context } = await openPage(sidecar);
		await page.goto(`${sidecar.address}/en/green-tea/`);
		await openConcierge(page);
		const second = await openPage(sidecar);
		await second.page.goto(`${sidecar.address}/en/sourdough/`);
		await openConcierge(second.page);

		await ask(page, 'How long should green tea steep?');
		const answer = lastTurn(page).locator('.answer');
		await answer.waitFor();
		await ask(second.page, 'How do I feed a sourdough starter?');
		await lastTurn(second.page).locator('.note', { hasText: /^You are number 1 in line/ }).waitFor();

		await page.locator(`${PANEL} button.stop`).click();
		await waitForAnnouncement(page, 'Answer stopped');
		const stopped = await answer.textContent();
		await page.waitForTimeout(300);
		assert.equal(await answer.textContent(), stopped, 'the answer kept growing after stop');
		assert.ok(!(await page.locator(`${PANEL} button.send`).isHidden()));
		// The stopped answer frees the model for the one waiting.
		await lastTurn(second.page).locator('.answer').waitFor();
		await second.page.locator(`${PANEL} button.stop`).click();
		await waitForAnnouncement(second.page, 'Answer stopped');
		await second.context.close();
		await context.close();
	});

	test('still shows the in-browser results when the sidecar has stopped', async () => {
		const sidecar = await startSidecar({ qaLog: false });
		const { page, context } = await openPage(sidecar);
		await page.goto(`${sidecar.address}/ja/kyoto/`);
		await openConcierge(page);
		await sidecar.close();
		await ask(page, 'How do I feed a sourdough starter?');
		const turn = lastTurn(page);
		await turn.locator('.sources li').first().waitFor();
		await turn.locator('.notice').first().waitFor();
		assert.match((await turn.locator('.sources').textContent()) ?? '', /Sourdough/);
		// The page's lang is Japanese, so the island speaks Japanese, and it says it keeps trying.
		assert.match((await turn.locator('.notice').first().textContent()) ?? '', /回答/);
		await page.locator(`${PANEL} .connection`, { hasText: /\d+\s*秒/ }).waitFor();
		await context.close();
	});

	test('keeps hostile text in titles, headings, questions and model output as text', async () => {
		const payload = `${XSS_IMG} <script>window.__xss=1</script> [1](javascript:window.__xss=1) **bold** [1]`;
		const sidecar = await startScriptedSidecar([{ content: payload }, { finish: 'stop' }]);
		const { page, context } = await openPage(sidecar);
		await page.goto(`${sidecar.address}/en/sourdough/`);
		await openConcierge(page);
		await ask(page, `${XSS_IMG} How do I feed the sourdough starter?`);
		await waitForAnnouncement(page, 'Answer complete');
		const turn = lastTurn(page);
		assert.ok(((await turn.locator('.you').textContent()) ?? '').includes(XSS_IMG));
		const sources = (await turn.locator('.sources').textContent()) ?? '';
		assert.ok(sources.includes(`${XSS_IMG} Sourdough & bread`), sources);
		const answer = (await turn.locator('.answer').textContent()) ?? '';
		assert.ok(answer.includes(XSS_IMG) && answer.includes('<script>window.__xss=1</script>'), answer);
		assert.equal(await turn.locator('.answer strong').textContent(), 'bold');
		assert.equal(await turn.locator('img, script').count(), 0);
		// The heading's <script> reaches the list through the matches' heading path.
		await page.goto(`${sidecar.address}/en/green-tea/`);
		await openConcierge(page);
		await ask(page, 'feeding the starter script');
		await lastTurn(page).locator('.sources li').first().waitFor();
		await waitForAnnouncement(page, 'Answer complete');
		const headings = (await lastTurn(page).locator('.sources').textContent()) ?? '';
		assert.ok(headings.includes('<script>window.__xss=1</script> Feeding the starter'), headings);
		assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
		await context.close();
	});

	test('opens with Ctrl+K, closes with Esc back to the launcher, and keeps the conversation across a followed link', async () => {
		const sidecar = await startSidecar({ qaLog: false });
		const { page, context } = await openPage(sidecar);
		await page.goto(`${sidecar.address}/en/sourdough/`);
		await page.locator('astro-concierge button').waitFor();
		await page.keyboard.press('Control+k');
		await page.locator(`${PANEL} dialog[open]`).waitFor();
		await page.waitForFunction((panel) => document.querySelector(panel)?.getAttribute('data-search') === 'ready', PANEL, { timeout: 60_000 });
		assert.equal(await page.evaluate((panel) => document.querySelector(panel)?.shadowRoot?.activeElement?.tagName, PANEL), 'TEXTAREA');
		await ask(page, 'How long should green tea steep?');
		await waitForAnnouncement(page, 'Answer complete');

		// A view transition to the cited article: the launcher and the conversation follow.
		await lastTurn(page).locator('.sources a').first().click();
		await page.waitForURL(/\/en\/green-tea\//);
		await page.locator(`${PANEL} dialog[open]`).waitFor({ state: 'detached' }).catch(() => {});
		assert.equal(await page.locator(`${PANEL} dialog[open]`).count(), 0);
		await page.locator('astro-concierge button').click();
		await page.locator(`${PANEL} dialog[open]`).waitFor();
		assert.equal(await page.locator(`${PANEL} .turn .you`).first().textContent(), 'You: How long should green tea steep?');
		await page.keyboard.press('Escape');
		await page.locator(`${PANEL} dialog[open]`).waitFor({ state: 'detached' });
		assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'ASTRO-CONCIERGE');

		// A full page load restores it from sessionStorage.
		await page.goto(`${sidecar.address}/ja/kyoto/`);
		await page.locator('astro-concierge button').click();
		assert.match((await page.locator(`${PANEL} .turn .you`).first().textContent()) ?? '', /How long should green tea steep\?/);
		await context.close();
	});

	test('lets the sidecar search, and says why, when the browser cannot load the model', async () => {
		const models = join(site.dir, 'dist', 'concierge', 'models');
		await rename(models, `${models}-moved`);
		try {
			const sidecar = await startSidecar();
			const { page, context } = await openPage(sidecar);
			await page.goto(`${sidecar.address}/en/green-tea/`);
			await page.locator('astro-concierge button').click();
			await page.waitForFunction((panel) => document.querySelector(panel)?.getAttribute('data-search') === 'failed', PANEL, { timeout: 60_000 });
			const progress = (await page.locator(`${PANEL} .progress`).textContent()) ?? '';
			assert.match(progress, /This browser cannot run the search model|could not be loaded/);
			assert.match(progress, /\/concierge\/models\/tiny-e5\/config\.json/);
			await ask(page, 'How long should green tea steep?');
			await waitForAnnouncement(page, 'Answer complete');
			assert.match((await lastTurn(page).locator('.sources').textContent()) ?? '', /How to brew green tea/);
			const log = (await readFile(join(dir, 'qa.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { mode: string });
			assert.equal(log.at(-1)!.mode, 'query');
			await context.close();
		} finally {
			await rename(`${models}-moved`, models);
		}
	});

	test('shows no floating launcher on a page that opted out', async () => {
		const sidecar = await startSidecar({ qaLog: false });
		const { page, context } = await openPage(sidecar);
		await page.goto(`${sidecar.address}/en/colophon/`);
		await page.waitForFunction(() => customElements.get('astro-concierge') !== undefined);
		assert.equal(await page.locator('astro-concierge').count(), 0);
		await context.close();
	});

	test('loads nothing from any other origin and breaks no rule of a strict CSP', () => {
		assert.deepEqual(offOrigin, []);
		// Astro's own ClientRouter inserts an inline <style> for its route announcer; that one is the site's to allow.
		assert.deepEqual(violations.filter((violation) => !violation.includes('.astro-route-announcer')), []);
	});
});

describe('a search-only site (endpoint: false) that prefetches', () => {
	let site: FixtureSite;
	let server: StaticServer;
	let browser: Browser;

	before(async () => {
		const models = await ensureTestModels();
		site = await copyFixture('island-site');
		const build = await buildSite(site.dir, { CONCIERGE_TEST_E5: models.e5, CONCIERGE_TEST_ENDPOINT: 'off', CONCIERGE_TEST_PREFETCH: '1' });
		assert.equal(build.code, 0, build.log);
		server = await startStaticServer({ '/': join(site.dir, 'dist') });
		browser = await launchChromium();
	});

	after(async () => {
		await browser?.close();
		await server?.close();
		await site?.remove();
	});

	test('loads the search when the browser is idle, before the concierge is opened', async () => {
		const page = await browser.newPage();
		const requested: string[] = [];
		page.on('request', (request) => requested.push(new URL(request.url()).pathname));
		await page.goto(`${server.url}/en/green-tea/`);
		await page.waitForFunction((panel) => document.querySelector(panel)?.getAttribute('data-search') === 'ready', PANEL, { timeout: 60_000 });
		assert.equal(await page.locator(`${PANEL} dialog[open]`).count(), 0);
		assert.ok(requested.includes('/concierge/kb.json'));
		assert.ok(requested.some((path) => path.startsWith('/concierge/models/') && path.endsWith('.onnx')));
		await page.close();
	});

	test('shows the in-browser results and says answers are off, without opening a WebSocket', async () => {
		const page = await browser.newPage();
		const sockets: string[] = [];
		page.on('websocket', (socket) => sockets.push(socket.url()));
		await page.goto(`${server.url}/en/green-tea/`);
		await page.locator('astro-concierge button').click();
		const input = page.locator(`${PANEL} textarea`);
		await input.fill('How do I feed a sourdough starter?');
		await input.press('Enter');
		const turn = page.locator(`${PANEL} .turn`).last();
		await turn.locator('.notice').waitFor({ timeout: 60_000 });
		assert.match((await turn.locator('.sources').textContent()) ?? '', /Sourdough/);
		assert.equal(await turn.locator('.notice').textContent(), 'Search-only mode: answers are turned off on this site');
		assert.deepEqual(sockets, []);
		await page.close();
	});
});

describe('the island under astro dev', () => {
	let site: FixtureSite;
	let server: Awaited<ReturnType<typeof dev>>;
	let browser: Browser;
	let origin: string;
	const saved = process.env.CONCIERGE_TEST_E5;

	before(async () => {
		const models = await ensureTestModels();
		// The fixture's config reads the model from the environment; dev() loads it in this process.
		process.env.CONCIERGE_TEST_E5 = models.e5;
		site = await copyFixture('island-site');
		server = await dev({ root: site.dir, server: { port: 0, host: '127.0.0.1' }, logLevel: 'error' });
		origin = `http://127.0.0.1:${server.address.port}`;
		browser = await launchChromium();
	});

	after(async () => {
		await browser?.close();
		await server?.stop();
		await site?.remove();
		if (saved === undefined) delete process.env.CONCIERGE_TEST_E5;
		else process.env.CONCIERGE_TEST_E5 = saved;
	});

	test("says a build is needed before the first one, then searches the last build's kb.json", async () => {
		const page = await browser.newPage();
		await page.goto(`${origin}/en/green-tea/`);
		await page.locator('astro-concierge button').click();
		await page.locator(`${PANEL} .progress`, { hasText: 'The concierge needs a build: run astro build once' }).waitFor({ timeout: 60_000 });

		const build = await buildSite(site.dir, { CONCIERGE_TEST_E5: process.env.CONCIERGE_TEST_E5 });
		assert.equal(build.code, 0, build.log);
		await page.reload();
		await page.locator('astro-concierge button').click();
		await page.waitForFunction((panel) => document.querySelector(panel)?.getAttribute('data-search') === 'ready', PANEL, { timeout: 60_000 });
		const input = page.locator(`${PANEL} textarea`);
		await input.fill('How do I feed a sourdough starter?');
		await input.press('Enter');
		const turn = page.locator(`${PANEL} .turn`).last();
		await turn.locator('.sources li').first().waitFor();
		assert.match((await turn.locator('.sources').textContent()) ?? '', /Sourdough/);
		await page.close();
	});
});

describe('the search worker', () => {
	let models: TestModels;
	let site: FixtureSite;
	let dir: string;
	let server: StaticServer;
	let browser: Browser;
	let page: Page;
	let workerPath: string;

	before(async () => {
		models = await ensureTestModels();
		site = await copyFixture('island-site');
		const build = await buildSite(site.dir, { CONCIERGE_TEST_E5: models.e5 });
		assert.equal(build.code, 0, build.log);
		const assets = await readdir(join(site.dir, 'dist', '_astro'));
		const worker = assets.find((name) => name.startsWith('search-worker') && name.endsWith('.js'));
		assert.ok(worker, `no search worker among the built assets: ${assets.join(', ')}`);
		workerPath = `/_astro/${worker}`;
		dir = await mkdtemp(join(tmpdir(), 'concierge-parity-'));
		server = await startStaticServer({ '/': join(site.dir, 'dist'), '/parity/models/': dirname(models.e5), '/parity/kb/': dir });
		browser = await launchChromium();
		page = await browser.newPage();
		await page.goto(`${server.url}/`);
	});

	after(async () => {
		await browser?.close();
		await server?.close();
		if (dir) await rm(dir, { recursive: true, force: true });
		await site?.remove();
	});

	// The seeds' first risk: the visitor's question must become the vector Node makes at build time.
	for (const dtype of ['fp32', 'q8'] as const) {
		test(`gives the vectors Node gives for Japanese, English and over-long questions in ${dtype}`, async () => {
			const long = Array.from({ length: 120 }, (_, i) => `section ${i} of the long question about green tea, 緑茶の温度と時間。`).join(' ');
			const texts = ['How do I brew green tea?', '京都のお寺は朝が静かですか？', long];
			const embedder = await createEmbedder({ model: models.e5, dtype });
			try {
				assert.ok(embedder.countTokens(E5_QUERY_PREFIX + long) > 512, 'the long text is not longer than e5 reads');
				const [probe] = await embedder.embedPassages(['Green tea.']);
				await writeFile(
					join(dir, `kb-${dtype}.json`),
					encodeKb({
						model: basename(models.e5),
						dtype,
						dimension: embedder.dimension,
						pooling: 'mean',
						normalize: true,
						queryPrefix: E5_QUERY_PREFIX,
						topK: 3,
						maxDistance: 0.5,
						contentVersion: `parity-${dtype}`,
						chunks: [{ id: '/tea/#0', url: '/tea/', anchor: '', title: 'Tea', heading: '', vector: probe! }],
					}),
				);
				const inBrowser = await page.evaluate(
					async ([workerPath, kbUrl, texts]) => {
						const worker = new Worker(workerPath, { type: 'module' });
						const reply = (type: string): Promise<any> =>
							new Promise((resolve, reject) =>
								worker.addEventListener('message', function listen(event: MessageEvent) {
									if (event.data.type === 'failed' || event.data.type === 'error') reject(new Error(event.data.message));
									if (event.data.type !== type) return;
									worker.removeEventListener('message', listen);
									resolve(event.data);
								}),
							);
						const ready = reply('ready');
						worker.postMessage({ type: 'load', kbUrl, runtimeUrl: '/concierge/runtime/', modelsUrl: '/parity/models/' });
						await ready;
						const embedded = reply('embedded');
						worker.postMessage({ type: 'embed', id: 1, texts });
						const { vectors } = (await embedded) as { vectors: number[][] };
						worker.terminate();
						return vectors;
					},
					[workerPath, `/parity/kb/kb-${dtype}.json`, texts] as const,
				);
				assert.equal(inBrowser.length, texts.length);
				for (const [i, text] of texts.entries()) {
					const [inNode] = await embedder.embedQueries([text]);
					const similarity = cosine(inBrowser[i]!, inNode!);
					assert.ok(similarity >= 0.9999, `text ${i}: browser and Node vectors differ (cosine ${similarity})`);
				}
			} finally {
				await embedder.dispose();
			}
		});
	}
});
