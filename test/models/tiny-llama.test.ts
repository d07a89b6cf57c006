import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadLanguageModel } from '../../sidecar/load-language-model.ts';
import type { ChatMessage, GenerateResult, LanguageModel } from '../../sidecar/load-language-model.ts';
import { makeTinyLlama } from './tiny-llama.ts';

// What the networks were designed to say after the ChatML assistant prompt.
const ENDLESS_CYCLE = 'Hello world, the sky is blue、そらがあおい。\n';
const ENDLESS_CYCLE_TOKENS = 16;
const STOPS_ANSWER = 'Hello world、こんにちは。';

const messages: ChatMessage[] = [
	{ role: 'system', content: 'You answer questions about this blog.' },
	{ role: 'user', content: 'こんにちは! What is the latest post about?' },
];

const load = (modelPath: string): Promise<LanguageModel> =>
	loadLanguageModel({ modelPath, threads: 1, contextSize: 512 });

async function sha256(file: string): Promise<string> {
	return createHash('sha256').update(await readFile(file)).digest('hex');
}

async function generateCollecting(
	model: LanguageModel,
	options: { maxTokens: number; signal?: AbortSignal; onChunk?: (text: string) => void },
): Promise<GenerateResult & { chunks: string[] }> {
	const chunks: string[] = [];
	const result = await model.generate({
		messages,
		maxTokens: options.maxTokens,
		signal: options.signal,
		onTextChunk(text) {
			chunks.push(text);
			options.onChunk?.(text);
		},
	});
	return { ...result, chunks };
}

describe('tiny llama models', () => {
	let folder: string;
	let endless: LanguageModel;
	let stops: LanguageModel;

	before(async () => {
		folder = await mkdtemp(join(tmpdir(), 'tiny-llama-'));
		await makeTinyLlama(join(folder, 'endless.gguf'), { variant: 'endless' });
		await makeTinyLlama(join(folder, 'stops.gguf'), { variant: 'stops' });
		endless = await load(join(folder, 'endless.gguf'));
		stops = await load(join(folder, 'stops.gguf'));
	});

	after(async () => {
		await endless?.dispose();
		await stops?.dispose();
		if (folder) await rm(folder, { recursive: true, force: true });
	});

	test('the generator writes byte-identical files under 2 MB on every run', async () => {
		for (const variant of ['endless', 'stops'] as const) {
			const again = join(folder, `${variant}-again.gguf`);
			await makeTinyLlama(again, { variant });
			assert.equal(await sha256(again), await sha256(join(folder, `${variant}.gguf`)));
			assert.ok((await stat(again)).size < 2 * 1024 * 1024);
		}
	});

	test('the loaded model reports the context size it was created with', () => {
		assert.ok(endless.contextSize >= 512);
	});

	test('the endless model streams its answer in several chunks that add up to the returned text', async () => {
		const result = await generateCollecting(endless, { maxTokens: 40 });
		assert.ok(result.chunks.length > 1, `only ${result.chunks.length} chunk(s)`);
		assert.equal(result.chunks.join(''), result.text);
		assert.ok(result.text.startsWith(ENDLESS_CYCLE + ENDLESS_CYCLE), JSON.stringify(result.text));
		assert.ok(ENDLESS_CYCLE.repeat(5).startsWith(result.text), JSON.stringify(result.text));
	});

	test('the endless model stops at maxTokens with finish length and exactly that many tokens', async () => {
		const maxTokens = 2 * ENDLESS_CYCLE_TOKENS + 5;
		const result = await generateCollecting(endless, { maxTokens });
		assert.equal(result.finish, 'length');
		assert.equal(result.tokens, maxTokens);
		assert.equal(result.chunks.join(''), result.text);
		for (const mark of ['、', '。', '\n', ' ']) assert.ok(result.text.includes(mark), `no ${JSON.stringify(mark)}`);
	});

	test('the stops model finishes by itself with finish stop before maxTokens', async () => {
		const result = await generateCollecting(stops, { maxTokens: 100 });
		assert.equal(result.finish, 'stop');
		assert.equal(result.text, STOPS_ANSWER);
		assert.ok(result.tokens > 0 && result.tokens < 100, `${result.tokens} tokens`);
		assert.ok(result.chunks.length > 1);
		assert.equal(result.chunks.join(''), result.text);
	});

	test('aborting after the first chunk ends the generation early with finish cancelled', async () => {
		const controller = new AbortController();
		const maxTokens = 2000;
		const result = await generateCollecting(endless, {
			maxTokens,
			signal: controller.signal,
			onChunk: () => controller.abort(),
		});
		assert.equal(result.finish, 'cancelled');
		assert.ok(result.tokens >= 1 && result.tokens < 20, `${result.tokens} tokens`);
		assert.equal(result.chunks.join(''), result.text);
		assert.ok(ENDLESS_CYCLE.startsWith(result.text), JSON.stringify(result.text));
	});

	test('a signal aborted before the call returns cancelled without generating', async () => {
		const result = await generateCollecting(endless, { maxTokens: 50, signal: AbortSignal.abort() });
		assert.deepEqual(
			{ text: result.text, finish: result.finish, tokens: result.tokens, chunks: result.chunks },
			{ text: '', finish: 'cancelled', tokens: 0, chunks: [] },
		);
	});

	test('countTokens gives a positive count that grows with the text', () => {
		const short = endless.countTokens('Hello');
		const longer = endless.countTokens('Hello world、こんにちは。 How are you today?');
		assert.ok(short > 0);
		assert.ok(longer > short, `${longer} <= ${short}`);
	});

	test('a GGUF without llama.feed_forward_length is rejected with an error naming that key', async () => {
		const broken = join(folder, 'no-feed-forward.gguf');
		await makeTinyLlama(broken, { variant: 'stops', omitMetadata: ['llama.feed_forward_length'] });
		await assert.rejects(load(broken), (error: Error) => {
			assert.match(error.message, /llama\.feed_forward_length/);
			assert.ok(error.message.includes(broken), error.message);
			return true;
		});
		// llama.cpp would have aborted the process; the loaded models still answering proves it lives.
		const result = await generateCollecting(stops, { maxTokens: 100 });
		assert.equal(result.text, STOPS_ANSWER);
	});

	test('a missing model file is rejected with an error naming the path', async () => {
		const missing = join(folder, 'does-not-exist.gguf');
		await assert.rejects(load(missing), (error: Error) => {
			assert.ok(error.message.includes(missing), error.message);
			return true;
		});
	});
});
