import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../../sidecar/answer-provider.ts';
import { createOpenAiProvider } from '../../sidecar/openai-provider.ts';
import type { OpenAiProviderOptions } from '../../sidecar/openai-provider.ts';
import { startOpenAiServer } from '../helpers/openai-server.ts';
import type { OpenAiServer, ScriptedEvent, ScriptedReply } from '../helpers/openai-server.ts';

const API_KEY = 'sk-test-0123456789abcdef';
const messages: ChatMessage[] = [
	{ role: 'system', content: 'You answer questions about this blog.' },
	{ role: 'user', content: '最新の記事は?' },
];

// Each test scripts the next reply; the server answers every request with whatever is set here.
let nextReply: ScriptedReply = {};
let server: OpenAiServer;

before(async () => {
	server = await startOpenAiServer(() => nextReply);
});

after(async () => {
	await server.close();
});

function provider(options: Partial<OpenAiProviderOptions> = {}) {
	return createOpenAiProvider({ baseUrl: server.url, model: 'tiny-test', apiKey: API_KEY, contextSize: 4096, ...options });
}

async function generate(
	reply: ScriptedReply,
	options: Partial<GenerateOptions> & { provider?: Partial<OpenAiProviderOptions> } = {},
): Promise<GenerateResult & { chunks: string[] }> {
	nextReply = reply;
	const chunks: string[] = [];
	const { provider: providerOptions, ...generateOptions } = options;
	const result = await provider(providerOptions).generate({
		messages,
		maxTokens: 64,
		...generateOptions,
		onTextChunk: (text) => chunks.push(text),
	});
	assert.equal(chunks.join(''), result.text, 'the streamed chunks add up to the returned text');
	return { ...result, chunks };
}

const contents = (...texts: string[]): ScriptedEvent[] => texts.map((content) => ({ content }));
const lastRequest = () => server.requests.at(-1)!;

describe('OpenAI-compatible answer provider', () => {
	test('streams the answer and sends the request an OpenAI-compatible server expects', async () => {
		const result = await generate(
			{ events: [...contents('こんにちは', '、', 'world'), { finish: 'stop' }] },
			{ maxTokens: 50, temperature: 0.2 },
		);
		assert.deepEqual(result.chunks, ['こんにちは', '、', 'world']);
		assert.equal(result.text, 'こんにちは、world');
		assert.equal(result.finish, 'stop');
		const request = lastRequest();
		assert.match(request.url, /^\/v1\/chat\/completions$/);
		assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
		assert.deepEqual(request.body, {
			model: 'tiny-test',
			messages,
			stream: true,
			stream_options: { include_usage: true },
			max_tokens: 50,
			temperature: 0.2,
		});
	});

	test('sends temperature 0 by default, top_k only when asked, and no authorization without a key', async () => {
		await generate({ events: [...contents('a'), { finish: 'stop' }] }, { provider: { apiKey: undefined } });
		assert.equal(lastRequest().body.temperature, 0);
		assert.equal('top_k' in lastRequest().body, false);
		assert.equal(lastRequest().headers.authorization, undefined);
		await generate({ events: [...contents('a'), { finish: 'stop' }] }, { topK: 20 });
		assert.equal(lastRequest().body.top_k, 20);
	});

	test('fails an answer whose server stops sending, naming the endpoint, and leaves the connection', async () => {
		await assert.rejects(
			generate({ events: [{ content: 'Begun' }, { delay: 2000 }, { content: ' never seen' }, { finish: 'stop' }] }, { provider: { idleTimeoutMs: 200 } }),
			/\/chat\/completions sent nothing for 0\.2 s/,
		);
		assert.equal(await lastRequest().closed, 'disconnected');
	});

	test('is named after the model and the host', () => {
		assert.equal(provider().name, `openai:tiny-test@${new URL(server.url).host}`);
		assert.equal(provider({ baseUrl: `${server.url}/` }).name, `openai:tiny-test@${new URL(server.url).host}`);
	});

	test('reassembles lines and multi-byte characters split across network chunks, skipping comments', async () => {
		const line = 'data: {"choices":[{"index":0,"delta":{"content":"そらがあおい"},"finish_reason":null}]}\n\n';
		const result = await generate({
			events: [
				{ raw: ': keep-alive\n\n' },
				{ raw: line.slice(0, 20) },
				{ delay: 15 },
				{ raw: line.slice(20, 50) },
				{ delay: 15 },
				{ raw: line.slice(50) },
				{ raw: ':\n' },
				{ raw: 'event: message\r\ndata: {"choices":[{"index":0,"delta":{"content":"。"},"finish_reason":"stop"}]}\r\n\r\n' },
			],
		});
		assert.equal(result.text, 'そらがあおい。');
		assert.equal(result.finish, 'stop');
	});

	test('decodes a UTF-8 character whose bytes arrive in different network chunks', async () => {
		nextReply = {};
		// The scripted server writes strings, so a raw byte split needs a server of its own.
		const bytes = Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"あお"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
		const cut = bytes.indexOf(Buffer.from('お')) + 1;
		const raw = createServer((req, res) => {
			req.resume();
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.write(bytes.subarray(0, cut));
			setTimeout(() => res.end(bytes.subarray(cut)), 20);
		});
		await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
		try {
			const address = raw.address() as AddressInfo;
			const result = await createOpenAiProvider({ baseUrl: `http://127.0.0.1:${address.port}/v1`, model: 'm', contextSize: 100 }).generate({
				messages,
				maxTokens: 10,
			});
			assert.equal(result.text, 'あお');
		} finally {
			raw.closeAllConnections();
			await new Promise((resolve) => raw.close(resolve));
		}
	});

	test('think tags split across SSE chunks never reach onTextChunk or the returned text', async () => {
		const result = await generate({
			events: [...contents('<th', 'ink>Let me ', 'think: <b> is', ' bold.</thi', 'nk>', '\n\n', 'The answer', ' is here.'), { finish: 'stop' }],
		});
		assert.equal(result.text, 'The answer is here.');
		assert.doesNotMatch(result.chunks.join('|'), /think|Let me|bold|</);
	});

	test('a thought in the middle of the stream is removed as well', async () => {
		const result = await generate({
			events: [...contents('Before. ', '<think>', 'hidden', '</think>', 'After.'), { finish: 'stop' }],
		});
		assert.equal(result.text, 'Before. After.');
	});

	test('reasoning_content and reasoning deltas are ignored but counted as generated tokens', async () => {
		const result = await generate({
			events: [
				{ reasoning: 'The visitor greets me. ' },
				{ reasoning: 'I greet back.', field: 'reasoning' },
				...contents('こんにちは。'),
				{ finish: 'stop' },
			],
		});
		assert.equal(result.text, 'こんにちは。');
		assert.deepEqual(result.chunks, ['こんにちは。']);
		// No usage from the server: estimated from everything generated, thoughts included.
		assert.ok(result.tokens >= 6 + Math.ceil('The visitor greets me. I greet back.'.length / 3), `${result.tokens}`);
	});

	test('a stream opening inside a thought shows only the answer when just </think> arrives as content', async () => {
		// llama.cpp-style: the thought went to reasoning_content, the template's closing tag leaks into content.
		const result = await generate({
			events: [{ reasoning: 'Thinking about rice.' }, ...contents('</th', 'ink>', '\n\n', 'Rice is cooked.'), { finish: 'stop' }],
		});
		assert.equal(result.text, 'Rice is cooked.');
	});

	test('a stream opening inside a thought drops the thought when it arrives with its </think> in one chunk', async () => {
		const result = await generate({ events: [...contents('A thought.</think>\n\nRice is cooked.'), { finish: 'stop' }] });
		assert.equal(result.text, 'Rice is cooked.');
	});

	test('startsInsideThought drops a raw thought streamed over many chunks before its </think>', async () => {
		const result = await generate(
			{ events: [...contents('A long ', 'thought ', 'about rice', '.</', 'think>', '\n', 'Rice is cooked.'), { finish: 'stop' }] },
			{ provider: { startsInsideThought: true } },
		);
		assert.equal(result.text, 'Rice is cooked.');
	});

	test('a thought that used up max tokens returns empty text and finish length', async () => {
		const result = await generate(
			{ events: [...contents('<think>', 'Still ', 'thinking'), { finish: 'length' }, { usage: { prompt_tokens: 30, completion_tokens: 8 } }] },
			{ maxTokens: 8 },
		);
		assert.deepEqual(
			{ text: result.text, finish: result.finish, tokens: result.tokens, chunks: result.chunks },
			{ text: '', finish: 'length', tokens: 8, chunks: [] },
		);
		const separated = await generate({ events: [{ reasoning: 'Still thinking' }, { finish: 'length' }] }, { maxTokens: 8 });
		assert.equal(separated.text, '');
		assert.equal(separated.finish, 'length');
	});

	test('an answer cut at max tokens ends with finish length', async () => {
		const result = await generate({ events: [...contents('Rice is'), { finish: 'length' }] });
		assert.equal(result.text, 'Rice is');
		assert.equal(result.finish, 'length');
	});

	test('aborting mid-stream returns cancelled with the text so far, and the server sees the disconnect', async () => {
		const controller = new AbortController();
		const events: ScriptedEvent[] = [];
		for (let i = 0; i < 200; i++) events.push({ content: `word${i} ` }, { delay: 10 });
		nextReply = { events: [...events, { finish: 'stop' }] };
		const chunks: string[] = [];
		const result = await provider().generate({
			messages,
			maxTokens: 500,
			signal: controller.signal,
			onTextChunk(text) {
				chunks.push(text);
				if (chunks.length === 3) controller.abort();
			},
		});
		assert.equal(result.finish, 'cancelled');
		assert.equal(result.text, 'word0 word1 word2 ');
		assert.equal(chunks.join(''), result.text);
		const request = lastRequest();
		assert.equal(await request.closed, 'disconnected');
		const sent = request.eventsSent;
		await new Promise((resolve) => setTimeout(resolve, 60));
		assert.equal(request.eventsSent, sent, 'the server kept writing after the client left');
		assert.ok(sent < 20, `${sent} events sent`);
	});

	test('after an abort no further event of the same network chunk is shown', async () => {
		const controller = new AbortController();
		const line = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
		nextReply = { events: [{ raw: line('one ') + line('two ') + line('three ') }, { delay: 50 }, { finish: 'stop' }] };
		const chunks: string[] = [];
		const result = await provider().generate({
			messages,
			maxTokens: 10,
			signal: controller.signal,
			onTextChunk(text) {
				chunks.push(text);
				controller.abort();
			},
		});
		assert.deepEqual({ text: result.text, finish: result.finish, chunks }, { text: 'one ', finish: 'cancelled', chunks: ['one '] });
	});

	test('a signal aborted before the call returns cancelled without a request', async () => {
		const before = server.requests.length;
		const result = await generate({ events: contents('x') }, { signal: AbortSignal.abort() });
		assert.deepEqual({ text: result.text, finish: result.finish, tokens: result.tokens }, { text: '', finish: 'cancelled', tokens: 0 });
		assert.equal(server.requests.length, before);
	});

	test('aborting while waiting for the response headers returns cancelled', async () => {
		const controller = new AbortController();
		nextReply = { events: [{ delay: 2000 }, ...contents('late'), { finish: 'stop' }] };
		setTimeout(() => controller.abort(), 30);
		const result = await provider().generate({ messages, maxTokens: 10, signal: controller.signal });
		assert.equal(result.finish, 'cancelled');
		assert.equal(result.text, '');
	});

	test('HTML in the answer passes through unchanged: rendering it safely is the client’s job', async () => {
		const html = '<script>alert("x")</script><img src=x onerror=alert(1)> &amp; <b>bold</b>';
		const result = await generate({ events: [...contents(html.slice(0, 9), html.slice(9, 30), html.slice(30)), { finish: 'stop' }] });
		assert.equal(result.text, html);
	});

	test('an HTTP 500 rejects with an error naming the status and the URL, never the API key', async () => {
		nextReply = { status: 500, errorBody: `{"error":{"message":"model crashed; key was ${API_KEY}"}}` };
		await assert.rejects(provider().generate({ messages, maxTokens: 10 }), (error: Error) => {
			assert.match(error.message, /\b500\b/);
			assert.ok(error.message.includes(`${server.url}/chat/completions`), error.message);
			assert.match(error.message, /model crashed/);
			assert.ok(!error.message.includes(API_KEY), error.message);
			return true;
		});
	});

	test('credentials in the base URL stay out of error messages', async () => {
		nextReply = { status: 401, errorBody: 'no' };
		const withCredentials = server.url.replace('http://', 'http://user:secret@');
		await assert.rejects(provider({ baseUrl: withCredentials }).generate({ messages, maxTokens: 10 }), (error: Error) => {
			assert.match(error.message, /\b401\b/);
			assert.ok(!error.message.includes('secret'), error.message);
			return true;
		});
	});

	test('an unreachable server rejects with an error naming the URL', async () => {
		const closed = await startOpenAiServer(() => ({}));
		await closed.close();
		const unreachable = createOpenAiProvider({ baseUrl: closed.url, model: 'm', apiKey: API_KEY, contextSize: 100 });
		await assert.rejects(unreachable.generate({ messages, maxTokens: 10 }), (error: Error) => {
			assert.ok(error.message.includes(closed.url), error.message);
			assert.ok(!error.message.includes(API_KEY));
			return true;
		});
	});

	test('an error event mid-stream and a stream cut off before finishing both reject', async () => {
		nextReply = { events: [...contents('Half'), { raw: 'data: {"error":{"message":"out of memory"}}\n\n' }] };
		await assert.rejects(provider().generate({ messages, maxTokens: 10 }), /out of memory/);
		nextReply = { events: contents('Half'), done: false };
		await assert.rejects(provider().generate({ messages, maxTokens: 10 }), /ended before the answer finished/);
	});

	test('generated tokens come from usage.completion_tokens when the server sends it', async () => {
		const result = await generate({
			events: [...contents('Hello'), { finish: 'stop' }, { usage: { prompt_tokens: 12, completion_tokens: 7 } }],
		});
		assert.equal(result.tokens, 7);
	});

	test('without usage, generated tokens are counted from the raw text, with the tokenizer when given', async () => {
		const estimated = await generate({ events: [...contents('<think>ab</think>', 'こんにちは'), { finish: 'stop' }] });
		assert.equal(estimated.text, 'こんにちは');
		assert.equal(estimated.tokens, 5 + Math.ceil('<think>ab</think>'.length / 3));
		const counted = await generate(
			{ events: [...contents('one two', ' three'), { finish: 'stop' }] },
			{ provider: { tokenizer: { countTokens: (text) => text.split(' ').length } } },
		);
		assert.equal(counted.tokens, 3);
	});

	test('token estimates without a tokenizer: CJK one per character, other text a third, 8 more per message', () => {
		const estimate = provider();
		assert.equal(estimate.countTokens(''), 0);
		assert.equal(estimate.countTokens('そらがあおい。'), 7);
		assert.equal(estimate.countTokens('Hello world'), 4);
		assert.equal(estimate.countTokens('空 is 青'), 2 + 2);
		// '最新の記事は?' is six CJK characters and a question mark.
		assert.equal(estimate.countPromptTokens(messages), 8 + Math.ceil(messages[0]!.content.length / 3) + 8 + 6 + 1);
	});

	test('a tokenizer, when given, replaces the estimates', () => {
		const withCounts = provider({
			tokenizer: { countTokens: (text) => text.length * 10, countPromptTokens: (list) => list.length * 100 },
		});
		assert.equal(withCounts.countTokens('ab'), 20);
		assert.equal(withCounts.countPromptTokens(messages), 200);
		const textOnly = provider({ tokenizer: { countTokens: (text) => text.length } });
		assert.equal(textOnly.countPromptTokens(messages), 8 * 2 + messages[0]!.content.length + messages[1]!.content.length);
		assert.equal(textOnly.contextSize, 4096);
	});

	test('after dispose, requests in flight end as cancelled and new ones are refused', async () => {
		nextReply = { events: [...contents('a'), { delay: 2000 }, ...contents('b'), { finish: 'stop' }] };
		const disposable = provider();
		const chunks: string[] = [];
		const pending = disposable.generate({ messages, maxTokens: 10, onTextChunk: (text) => chunks.push(text) });
		while (chunks.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
		await disposable.dispose();
		const result = await pending;
		assert.equal(result.finish, 'cancelled');
		assert.equal(result.text, 'a');
		await assert.rejects(disposable.generate({ messages, maxTokens: 10 }), /disposed/);
	});
});
