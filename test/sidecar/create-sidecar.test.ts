import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { formatBundle, type BundleChunk } from '../../integration/bundle.ts';
import { bundleHeader } from '../helpers/bundle-header.ts';
import { createEmbedder } from '../../integration/create-embedder.ts';
import { encodeKb } from '../../integration/encode-kb.ts';
import { readKb, searchKb } from '../../integration/runtime/kb.ts';
import type { AnswerProvider } from '../../sidecar/answer-provider.ts';
import { startChromaServer, type ChromaServer } from '../../sidecar/chroma-server.ts';
import { createSidecar, type Sidecar, type SidecarOptions } from '../../sidecar/create-sidecar.ts';
import { loadLanguageModel, type LanguageModel } from '../../sidecar/load-language-model.ts';
import { fitContexts } from '../../sidecar/fit-contexts.ts';
import { createOpenAiProvider } from '../../sidecar/openai-provider.ts';
import type { ServerMessage } from '../../sidecar/protocol.ts';
import { startOpenAiServer, type ScriptedEvent } from '../helpers/openai-server.ts';
import { ensureTestModels, type TestModels } from '../models/make-models.ts';
import { PASSAGES } from '../models/passages.ts';

const contentVersion = 'test-version-1';

/** A WebSocket client that records every frame and can wait for the one that ends a job. */
class Client {
	frames: ServerMessage[] = [];
	socket: WebSocket;
	closed: Promise<{ code: number }>;
	private waiters: (() => void)[] = [];

	constructor(url: string, headers: Record<string, string> = {}) {
		this.socket = new WebSocket(url, { headers });
		this.socket.on('message', (data) => {
			this.frames.push(JSON.parse(data.toString()) as ServerMessage);
			for (const wake of this.waiters.splice(0)) wake();
		});
		this.closed = new Promise((resolve) => this.socket.on('close', (code) => resolve({ code })));
	}

	async open(): Promise<Extract<ServerMessage, { type: 'hello' }>> {
		return (await this.next((frame) => frame.type === 'hello')) as Extract<ServerMessage, { type: 'hello' }>;
	}

	send(frame: unknown) {
		this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
	}

	/** The first frame (from `from` on) that matches, waiting for it if need be. */
	async next(match: (frame: ServerMessage) => boolean, from = 0): Promise<ServerMessage> {
		for (;;) {
			const found = this.frames.slice(from).find(match);
			if (found) return found;
			await new Promise<void>((wake) => this.waiters.push(wake));
		}
	}

	/** Sends a job and collects its frames up to `done` or `error`. */
	async ask(frame: unknown): Promise<ServerMessage[]> {
		const from = this.frames.length;
		this.send(frame);
		await this.next((item) => item.type === 'done' || item.type === 'error', from);
		return this.frames.slice(from);
	}

	close() {
		this.socket.close();
	}
}

function of<T extends ServerMessage['type']>(frames: ServerMessage[], type: T): Extract<ServerMessage, { type: T }>[] {
	return frames.filter((frame): frame is Extract<ServerMessage, { type: T }> => frame.type === type);
}

/** A real model that also counts its generations, so a test can tell whether the model was asked at all. */
function counted(model: LanguageModel): AnswerProvider & { calls: number; chunks: number } {
	const provider = {
		calls: 0,
		chunks: 0,
		name: model.name,
		contextSize: model.contextSize,
		countTokens: (text: string) => model.countTokens(text),
		countPromptTokens: (messages: Parameters<LanguageModel['countPromptTokens']>[0]) => model.countPromptTokens(messages),
		generate: (options: Parameters<LanguageModel['generate']>[0]) => {
			provider.calls++;
			return model.generate({
				...options,
				onTextChunk: (text: string) => {
					provider.chunks++;
					options.onTextChunk?.(text);
				},
			});
		},
		dispose: () => model.dispose(),
	};
	return provider;
}

describe('the sidecar over a real Chroma server and a tiny GGUF model', () => {
	let models: TestModels;
	let dir: string;
	let chroma: ChromaServer;
	let endless: LanguageModel;
	let provider: ReturnType<typeof counted>;
	let sidecar: Sidecar;
	let url: string;
	let chunks: BundleChunk[];
	let kbText: string;
	const sidecars: Sidecar[] = [];

	const start = async (overrides: Partial<SidecarOptions> = {}) => {
		const started = await createSidecar({
			provider,
			port: 0,
			chroma: { url: chroma.url },
			bundle: join(dir, 'bundle.jsonl'),
			embeddingModel: models.e5,
			maxTokens: 24,
			temperature: 0,
			rateLimit: 0,
			qaLog: join(dir, 'qa.jsonl'),
			logger: { debug() {}, info() {}, warn() {}, error() {} },
			...overrides,
		});
		sidecars.push(started);
		return started;
	};

	before(async () => {
		models = await ensureTestModels();
		dir = await mkdtemp(join(tmpdir(), 'concierge-sidecar-'));
		chroma = await startChromaServer({ path: join(dir, 'chroma'), port: 0 });
		const embedder = await createEmbedder({ model: models.e5, dtype: 'q8' });
		const vectors = await embedder.embedPassages(PASSAGES.map((item) => item.passage));
		await embedder.dispose();
		chunks = PASSAGES.map((item, i) => ({
			id: `/posts/${item.id}/#0`,
			text: item.passage,
			metadata: { url: `/posts/${item.id}/`, anchor: 'intro', title: `Post ${item.id}`, heading: '', lang: item.lang, articleHash: item.id },
			embedding: Array.from(vectors[i]!),
		}));
		const header = bundleHeader({ dimension: vectors[0]!.length, maxDistance: 0.5, contentVersion, chunks: chunks.length });
		await writeFile(join(dir, 'bundle.jsonl'), formatBundle(header, chunks));
		kbText = encodeKb({
			...header,
			chunks: chunks.map((chunk, i) => ({
				id: chunk.id,
				url: chunk.metadata.url,
				anchor: chunk.metadata.anchor,
				title: chunk.metadata.title,
				heading: '',
				vector: vectors[i]!,
			})),
		});
		endless = await loadLanguageModel({ modelPath: models.llamaEndless, threads: 1, contextSize: 4096 });
		provider = counted(endless);
		sidecar = await start({ topK: 3, maxDistance: 0.5 });
		url = `${sidecar.address.replace('http', 'ws')}/concierge`;
	});

	after(async () => {
		for (const started of sidecars) await started.close();
		await endless?.dispose();
		await chroma?.close();
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	test('refuses to start when max tokens leave no room for a prompt', async () => {
		await assert.rejects(start({ maxTokens: 4000 }), /leave -104 tokens for the prompt in a 4096-token context/);
	});

	test('greets with the protocol version and the content version it serves', async () => {
		const client = new Client(url);
		assert.deepEqual(await client.open(), { type: 'hello', protocol: 1, kb_version: contentVersion });
		client.close();
	});

	test('gives the model the chunks in the order the browser sent them, dropping unknown ids', async () => {
		const client = new Client(url);
		await client.open();
		const ids = [chunks[3]!.id, '/posts/nowhere/#0', chunks[0]!.id, chunks[7]!.id];
		const frames = await client.ask({ action: 'generate', question: 'How do I install Node?', chunk_ids: ids, kb_version: contentVersion });
		const [contexts] = of(frames, 'contexts');
		assert.equal(contexts?.mode, 'ids');
		assert.deepEqual(
			contexts?.items.map((item) => item.id),
			[chunks[3]!.id, chunks[0]!.id, chunks[7]!.id],
		);
		assert.equal(contexts?.items[0]?.url, `${chunks[3]!.metadata.url}#intro`);
		assert.equal(contexts?.items[0]?.title, chunks[3]!.metadata.title);
		client.close();
	});

	test('answers by its own search when every id is unknown or the kb version is stale, choosing what the browser would', async () => {
		const client = new Client(url);
		await client.open();
		const kb = readKb(kbText);
		const embedder = await createEmbedder({ model: models.e5, dtype: 'q8' });
		try {
			for (const item of [PASSAGES[0]!, PASSAGES.find((passage) => passage.lang === 'ja')!]) {
				const [query] = await embedder.embedQueries([item.query]);
				const inBrowser = searchKb(kb, query!, { topK: 3, maxDistance: 0.5 }).map((match) => match.chunk.id);
				const unknown = await client.ask({ action: 'generate', question: item.query, chunk_ids: ['/posts/gone/#0'], kb_version: contentVersion });
				const stale = await client.ask({ action: 'generate', question: item.query, chunk_ids: [chunks[5]!.id], kb_version: 'old' });
				const query2 = await client.ask({ action: 'query', question: item.query });
				for (const frames of [unknown, stale, query2]) {
					const [contexts] = of(frames, 'contexts');
					assert.ok(contexts, JSON.stringify(frames));
					assert.equal(contexts?.mode, 'query');
					assert.deepEqual(
						contexts?.items.map((context) => context.id),
						inBrowser,
					);
					assert.ok(contexts?.items.every((context) => typeof context.distance === 'number'));
				}
			}
		} finally {
			await embedder.dispose();
			client.close();
		}
	});

	test('streams frames by the flush rule that add up to the model\'s answer, then a TRUNCATED notice at max tokens', async () => {
		const client = new Client(url);
		await client.open();
		const frames = await client.ask({ action: 'generate', question: 'Nodeのインストール方法は？', chunk_ids: [chunks[0]!.id], kb_version: contentVersion });
		const tokens = of(frames, 'token').map((frame) => frame.content);
		assert.ok(tokens.length > 2);
		for (const content of tokens.slice(0, -1)) {
			assert.ok([...content].length >= 8 || /[。、\n]$/.test(content), `frame ${JSON.stringify(content)} was sent too early`);
		}
		// The Q&A log is written after the client's done frame, so it is read once the entry is there.
		let entry: Record<string, unknown> | undefined;
		for (let attempt = 0; attempt < 50 && !entry; attempt++) {
			const lines = (await readFile(join(dir, 'qa.jsonl'), 'utf8')).trim().split('\n');
			entry = lines.map((line) => JSON.parse(line)).find((item) => item.question === 'Nodeのインストール方法は？');
			if (!entry) await new Promise((resolve) => setTimeout(resolve, 50));
		}
		assert.ok(entry, 'the job is not in the Q&A log');
		assert.equal(tokens.join(''), entry.answer);
		assert.ok(!('address' in entry) && !JSON.stringify(entry).includes('127.0.0.1'));
		const [notice] = of(frames, 'notice');
		assert.deepEqual(notice, { type: 'notice', code: 'TRUNCATED', content: '（※ 回答が長くなったため省略されました）' });
		const [done] = of(frames, 'done');
		assert.equal(done?.finish, 'length');
		assert.equal(done?.stats.tokens, 24);
		assert.ok(frames.findIndex((frame) => frame.type === 'contexts') < frames.findIndex((frame) => frame.type === 'token'));
		client.close();
	});

	test('fits a 1 MB context into the budget by the model\'s own token counts, filling at least 90% of it, in ja and en', () => {
		const budget = endless.contextSize - 512 - 200;
		for (const [lang, sentence] of [
			['ja', '東京の春は気温の差が大きく、朝と夜は冷えます。'],
			['en', 'Containers are disposable, but the data of a database must survive a restart. '],
		] as const) {
			const text = sentence.repeat(Math.ceil(1_000_000 / sentence.length));
			const fitted = fitContexts({
				question: lang === 'ja' ? '梅雨の服装は？' : 'How do I back up a volume?',
				lang,
				contexts: [{ id: '/big/#0', title: 'Big', url: '/big/', text }],
				budget,
				countPromptTokens: (messages) => endless.countPromptTokens(messages),
				countTokens: (value) => endless.countTokens(value),
			});
			assert.equal(fitted.contexts.length, 1);
			assert.ok(fitted.promptTokens <= budget, `${lang}: ${fitted.promptTokens} > ${budget}`);
			assert.ok(fitted.promptTokens >= 0.9 * budget, `${lang}: ${fitted.promptTokens} fills less than 90% of ${budget}`);
		}
	});

	test('answers with no_context and no model call when nothing is close enough', async () => {
		const strict = await start({ maxDistance: 0.000001 });
		const client = new Client(`${strict.address.replace('http', 'ws')}/concierge`);
		await client.open();
		const calls = provider.calls;
		const frames = await client.ask({ action: 'query', question: 'zebra quantum marmalade' });
		assert.deepEqual(of(frames, 'contexts')[0]?.items, []);
		assert.equal(of(frames, 'notice')[0]?.code, 'NO_CONTEXT');
		assert.equal(of(frames, 'done')[0]?.finish, 'no_context');
		assert.equal(provider.calls, calls);
		client.close();
	});

	test('cancel and disconnect stop the generation at once and the next queued client is served', async () => {
		const long = await start({ maxTokens: 3000 });
		const address = `${long.address.replace('http', 'ws')}/concierge`;
		const first = new Client(address);
		const second = new Client(address);
		const third = new Client(address);
		await Promise.all([first.open(), second.open(), third.open()]);
		const ask = { action: 'generate', question: 'Tell me everything', chunk_ids: [chunks[0]!.id], kb_version: contentVersion };
		first.send(ask);
		await first.next((frame) => frame.type === 'token');
		second.send(ask);
		const queued = await second.next((frame) => frame.type === 'queued');
		assert.equal(queued.type === 'queued' && queued.position, 1);
		third.send(ask);
		await third.next((frame) => frame.type === 'queued');

		first.send({ action: 'cancel' });
		const done = await first.next((frame) => frame.type === 'done');
		assert.equal(done.type === 'done' && done.finish, 'cancelled');
		await second.next((frame) => frame.type === 'token');
		// Only the second job generates now; the first one's frames stopped with its done.
		const firstFrames = first.frames.length;
		// The third moved up to first in line when the first job ended.
		await third.next((frame) => frame.type === 'queued' && frame.position === 1);

		second.close();
		await third.next((frame) => frame.type === 'token');
		third.send({ action: 'cancel' });
		await third.next((frame) => frame.type === 'done');
		const generated = provider.chunks;
		await new Promise((resolve) => setTimeout(resolve, 300));
		assert.equal(provider.chunks, generated, 'the model kept generating after the last job was cancelled');
		assert.equal(first.frames.length, firstFrames, 'the cancelled client got frames after done');
		first.close();
		third.close();
	});

	test('answers each bad input with its code and keeps serving', async () => {
		const client = new Client(url);
		await client.open();
		const cases: [unknown, string][] = [
			['not json', 'INVALID_JSON'],
			[[1, 2], 'INVALID_JSON'],
			[{ action: 'dance' }, 'UNKNOWN_ACTION'],
			[{ action: 'query', question: '   ' }, 'INVALID_QUESTION'],
			[{ action: 'query', question: 'x'.repeat(1001) }, 'QUESTION_TOO_LONG'],
			[{ action: 'generate', question: 'q', chunk_ids: ['no-hash'], kb_version: contentVersion }, 'INVALID_CHUNK_IDS'],
			[{ action: 'generate', question: 'q', chunk_ids: 'x', kb_version: contentVersion }, 'INVALID_CHUNK_IDS'],
			[{ action: 'generate', question: 'q', chunk_ids: Array.from({ length: 17 }, (_, i) => `/a/#${i}`), kb_version: contentVersion }, 'TOO_MANY_CHUNK_IDS'],
			[{ action: 'cancel' }, 'NO_JOB'],
		];
		for (const [frame, code] of cases) {
			const [reply] = await client.ask(frame);
			assert.deepEqual(reply?.type === 'error' && reply.code, code, `${JSON.stringify(frame).slice(0, 60)} → ${JSON.stringify(reply)}`);
		}
		const frames = await client.ask({ action: 'query', question: PASSAGES[0]!.query });
		assert.ok(of(frames, 'done').length === 1, 'the connection still answers after bad input');

		const big = new Client(url);
		await big.open();
		big.send({ action: 'query', question: 'x'.repeat(20_000) });
		assert.equal((await big.closed).code, 1009);

		const foreign = new WebSocket(url, { headers: { origin: 'https://evil.example' } });
		const status = await new Promise<number>((resolve) => foreign.on('unexpected-response', (_, response) => resolve(response.statusCode ?? 0)));
		assert.equal(status, 403);

		// Malformed upgrade requests, and clients that reset the socket after a refusal, must not take the server down.
		for (const target of ['//x:99999/', '/nope']) {
			const socket = connect(sidecar.port, '127.0.0.1');
			await once(socket, 'connect');
			socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
			socket.resetAndDestroy();
		}
		await new Promise((resolve) => setTimeout(resolve, 100));
		assert.equal((await fetch(`${sidecar.address}/healthz`)).status, 200);
		client.close();
	});

	test('closes connections beyond the per-address limit with 1013', async () => {
		const clients = Array.from({ length: 9 }, () => new Client(url));
		const closes = await Promise.all(clients.map((client) => Promise.race([client.closed, client.open().then(() => undefined)])));
		assert.deepEqual(
			closes.filter((close) => close !== undefined).map((close) => close!.code),
			[1013],
		);
		for (const client of clients) client.close();
	});

	test('refuses a second job on one connection while the first runs', async () => {
		const long = await start({ maxTokens: 3000 });
		const client = new Client(`${long.address.replace('http', 'ws')}/concierge`);
		await client.open();
		client.send({ action: 'generate', question: 'Tell me everything', chunk_ids: [chunks[0]!.id], kb_version: contentVersion });
		await client.next((frame) => frame.type === 'token');
		const [reply] = await client.ask({ action: 'query', question: 'again' });
		assert.equal(reply?.type === 'error' && reply.code, 'JOB_IN_PROGRESS');
		client.send({ action: 'cancel' });
		await client.next((frame) => frame.type === 'done');
		client.close();
	});

	test('counts jobs and tokens in /metrics, answered to loopback', async () => {
		const before = await (await fetch(`${sidecar.address}/metrics`)).text();
		const client = new Client(url);
		await client.open();
		await client.ask({ action: 'query', question: PASSAGES[1]!.query });
		client.close();
		const after = await (await fetch(`${sidecar.address}/metrics`)).text();
		const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
		assert.ok(value(after, 'concierge_tokens_generated_total') > value(before, 'concierge_tokens_generated_total'));
		assert.ok(
			value(after, 'concierge_jobs_total\\{outcome="length"\\}') > value(before, 'concierge_jobs_total\\{outcome="length"\\}'),
		);
	});

	test('serves a built site\'s files on the same port, never outside its folder', async () => {
		const dist = join(dir, 'site-dist');
		const client = join(dist, 'client');
		for (const [path, content] of [
			['index.html', '<h1>Home</h1>'],
			['blog/post/index.html', '<h1>Post</h1>'],
			['concierge/kb.json', '{"format":"astro-concierge-kb"}'],
			['_astro/app.1234.js', 'export {};'],
			['404.html', '<h1>Lost</h1>'],
		] as const) {
			await mkdir(dirname(join(client, path)), { recursive: true });
			await writeFile(join(client, path), content);
		}
		await writeFile(join(dist, 'secret.txt'), 'server side only');
		const served = await start({ site: dist });
		const get = (path: string) => fetch(`${served.address}${path}`);
		assert.equal(await (await get('/')).text(), '<h1>Home</h1>');
		assert.equal(await (await get('/blog/post/')).text(), '<h1>Post</h1>');
		assert.equal(await (await get('/blog/post')).text(), '<h1>Post</h1>');
		const kbResponse = await get('/concierge/kb.json');
		assert.match(kbResponse.headers.get('content-type') ?? '', /^application\/json/);
		assert.match((await get('/_astro/app.1234.js')).headers.get('cache-control') ?? '', /immutable/);
		const lost = await get('/nowhere/');
		assert.equal(lost.status, 404);
		assert.equal(await lost.text(), '<h1>Lost</h1>');
		for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt']) {
			const response = await get(path);
			assert.equal(response.status, 404, path);
			assert.doesNotMatch(await response.text(), /server side only/);
		}
		assert.equal((await get('/healthz')).status, 200);
		const socket = new Client(`${served.address.replace('http', 'ws')}/concierge`);
		assert.equal((await socket.open()).type, 'hello');
		socket.close();
		await assert.rejects(start({ site: join(dir, 'chroma') }), /does not look like a built site/);
	});

	test('reports 503 on /healthz while Chroma is down and 200 once it is back', async () => {
		const port = chroma.port;
		await chroma.close();
		const down = await fetch(`${sidecar.address}/healthz`);
		assert.equal(down.status, 503);
		chroma = await startChromaServer({ path: join(dir, 'chroma'), port });
		const up = await fetch(`${sidecar.address}/healthz`);
		assert.equal(up.status, 200);
		assert.equal(((await up.json()) as { kb_version: string }).kb_version, contentVersion);
	});
});

describe('the sidecar with an OpenAI-compatible reasoning model', () => {
	let models: TestModels;
	let dir: string;
	let chroma: ChromaServer;
	let sidecar: Sidecar;
	const script: ScriptedEvent[][] = [
		// A thought whose tags are split across network chunks.
		[{ content: '<thi' }, { delay: 5 }, { content: 'nk>secret plan' }, { delay: 5 }, { content: ' more</th' }, { delay: 5 }, { content: 'ink>\nThe answer [1].' }, { finish: 'stop' }],
		// A template that opened the thought in the prompt: only its end arrives.
		[{ content: 'hidden reasoning</think>' }, { content: 'Visible <b>answer</b>.' }, { finish: 'stop' }],
		// Thoughts in reasoning_content, and a thought that uses up max tokens.
		[{ reasoning: 'private musing' }, { content: 'Short.' }, { finish: 'stop' }],
		[{ reasoning: 'thinking until the end' }, { finish: 'length' }],
	];
	let served = 0;

	before(async () => {
		models = await ensureTestModels();
		dir = await mkdtemp(join(tmpdir(), 'concierge-sidecar-openai-'));
		chroma = await startChromaServer({ path: join(dir, 'chroma'), port: 0 });
		const bundle = join(dir, 'bundle.jsonl');
		await writeFile(
			bundle,
			formatBundle(
				bundleHeader({ dimension: 2, contentVersion: 'remote-1', chunks: 1 }),
				[{ id: '/a/#0', text: 'Alpha text.', metadata: { url: '/a/', anchor: '', title: 'Alpha', heading: '', lang: 'en', articleHash: 'a' }, embedding: [1, 0] }],
			),
		);
		const server = await startOpenAiServer(() => ({ events: script[served++ % script.length]! }));
		const provider = createOpenAiProvider({ baseUrl: server.url, model: 'reasoner', contextSize: 4096 });
		sidecar = await createSidecar({
			provider,
			port: 0,
			chroma: { url: chroma.url },
			bundle,
			rateLimit: 0,
			qaLog: false,
			logger: { debug() {}, info() {}, warn() {}, error() {} },
		});
		sidecarCleanup.push(async () => {
			await sidecar.close();
			await provider.dispose();
			await server.close();
		});
	});

	const sidecarCleanup: (() => Promise<void>)[] = [];
	after(async () => {
		for (const step of sidecarCleanup) await step();
		await chroma?.close();
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	test('never sends thought text, however the thought arrives', async () => {
		const client = new Client(`${sidecar.address.replace('http', 'ws')}/concierge`);
		await client.open();
		const ask = { action: 'generate', question: 'What is alpha?', chunk_ids: ['/a/#0'], kb_version: 'remote-1' };
		const answers: string[] = [];
		const finishes: string[] = [];
		const notices: string[] = [];
		for (let i = 0; i < script.length; i++) {
			const frames = await client.ask(ask);
			answers.push(of(frames, 'token').map((frame) => frame.content).join(''));
			finishes.push(of(frames, 'done')[0]!.finish);
			notices.push(...of(frames, 'notice').map((frame) => frame.code));
			for (const secret of ['secret', 'hidden', 'musing', 'thinking', 'think>']) {
				assert.ok(!JSON.stringify(frames).includes(secret), `"${secret}" reached the client: ${JSON.stringify(frames)}`);
			}
		}
		assert.deepEqual(answers, ['The answer [1].', 'Visible <b>answer</b>.', 'Short.', '']);
		assert.deepEqual(finishes, ['stop', 'stop', 'stop', 'length']);
		assert.deepEqual(notices, ['TRUNCATED']);
		client.close();
	});
});
