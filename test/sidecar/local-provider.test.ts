import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChatMLChatWrapper, getLlama, LlamaChat } from 'node-llama-cpp';
import type { ChatHistoryItem, ChatWrapper, ChatWrapperSettings } from 'node-llama-cpp';
import type { ChatMessage, GenerateResult } from '../../sidecar/answer-provider.ts';
import { loadLanguageModel } from '../../sidecar/load-language-model.ts';
import type { LanguageModel } from '../../sidecar/load-language-model.ts';
import { loadTokenizer } from '../../sidecar/load-tokenizer.ts';
import { ensureTestModels } from '../models/make-models.ts';
import type { TestModels } from '../models/make-models.ts';

const conversation: ChatMessage[] = [
	{ role: 'system', content: 'You answer questions about this blog.' },
	{ role: 'user', content: 'こんにちは! What is the latest post about?' },
	{ role: 'assistant', content: 'It is about <b>rice</b> cooking.' },
	{ role: 'user', content: 'And the one before?' },
];

// The same conversation written directly in node-llama-cpp's terms, independent of the provider's conversion.
const conversationHistory: ChatHistoryItem[] = [
	{ type: 'system', text: 'You answer questions about this blog.' },
	{ type: 'user', text: 'こんにちは! What is the latest post about?' },
	{ type: 'model', response: ['It is about <b>rice</b> cooking.'] },
	{ type: 'user', text: 'And the one before?' },
	{ type: 'model', response: [] },
];

type ThoughtSettings = NonNullable<NonNullable<ChatWrapperSettings['segments']>['thought']>;

// The tiny models can only say their fixed sentences, so a reasoning model is imitated by a
// ChatML wrapper that declares some of those words to be the tags around a thought.
function chatMlWithThoughts(thought: ThoughtSettings): ChatWrapper {
	return new (class extends ChatMLChatWrapper {
		override readonly settings: ChatWrapperSettings = { ...ChatMLChatWrapper.defaultSettings, segments: { thought } };
	})();
}

/** Every endless answer starts "Hello world, the sky is blue、": a thought from "Hello" to "、". */
const thoughtFromHello = (): ChatWrapper => chatMlWithThoughts({ prefix: 'Hello', suffix: '、' });
/** The template opens a thought itself, like DeepSeek-R1 or Qwen3 thinking templates do. */
const thoughtOpenedOnStart = (): ChatWrapper =>
	chatMlWithThoughts({ prefix: '<think>\n', suffix: '、', openOnResponseStart: true });

// Counts the tokens a plain LlamaChat, not the provider, leaves in its context sequence after
// generating a single token: the prompt, with whatever LlamaChat adds before the answer.
async function tokensLlamaChatEvaluates(modelPath: string, chatWrapper?: ChatWrapper): Promise<number> {
	const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 1 });
	try {
		const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
		const context = await model.createContext({ contextSize: 512, threads: 1 });
		const sequence = context.getSequence();
		const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: chatWrapper ?? 'auto' });
		await chat.generateResponse(conversationHistory.map((item) => structuredClone(item)), { maxTokens: 1, temperature: 0 });
		// The one generated token is sampled but not yet evaluated.
		return sequence.contextTokens.length;
	} finally {
		await llama.dispose();
	}
}

async function collect(
	model: LanguageModel,
	options: { maxTokens: number; temperature?: number; topK?: number; signal?: AbortSignal },
): Promise<GenerateResult & { chunks: string[] }> {
	const chunks: string[] = [];
	const result = await model.generate({
		messages: conversation,
		...options,
		onTextChunk: (text) => chunks.push(text),
	});
	return { ...result, chunks };
}

describe('local GGUF answer provider', () => {
	let models: TestModels;
	// Each load starts a llama.cpp instance of its own, so the tests share one per model and wrapper.
	const loaded = new Map<string, Promise<LanguageModel>>();
	const load = (variant: 'llamaStops' | 'llamaEndless', thoughts?: 'fromHello' | 'openedOnStart'): Promise<LanguageModel> => {
		const key = `${variant}:${thoughts}`;
		let model = loaded.get(key);
		if (!model) {
			const chatWrapper = thoughts === 'fromHello' ? thoughtFromHello() : thoughts === 'openedOnStart' ? thoughtOpenedOnStart() : undefined;
			model = loadLanguageModel({ modelPath: models[variant], threads: 1, contextSize: 512, chatWrapper });
			loaded.set(key, model);
		}
		return model;
	};

	before(async () => {
		models = await ensureTestModels();
	});

	after(async () => {
		for (const model of loaded.values()) await (await model).dispose();
	});

	test('is named after the model file', async () => {
		const model = await load('llamaStops');
		assert.equal(model.name, 'local:tiny-llama-stops.gguf');
	});

	test('countPromptTokens is exactly the prompt LlamaChat evaluates, BOS and generation prompt included', async () => {
		const model = await load('llamaStops');
		const counted = model.countPromptTokens(conversation);
		assert.equal(counted, await tokensLlamaChatEvaluates(models.llamaStops));
		// Clearly more than the bare texts: the template's role markers are counted too.
		const texts = conversation.reduce((sum, message) => sum + model.countTokens(message.content), 0);
		assert.ok(counted > texts + conversation.length * 2, `${counted} <= ${texts} + markers`);
	});

	test('countPromptTokens includes a thought prefix LlamaChat opens before the answer', async () => {
		const plain = await load('llamaStops');
		const thinking = await load('llamaStops', 'openedOnStart');
		const counted = thinking.countPromptTokens(conversation);
		assert.equal(counted, await tokensLlamaChatEvaluates(models.llamaStops, thoughtOpenedOnStart()));
		assert.equal(counted, plain.countPromptTokens(conversation) + plain.countTokens('<think>\n'));
	});

	test('thought segments never reach onTextChunk or the returned text', async () => {
		const model = await load('llamaEndless', 'fromHello');
		const result = await collect(model, { maxTokens: 40 });
		assert.ok(result.text.startsWith('そらがあおい。\nそらがあおい。\n'), JSON.stringify(result.text));
		assert.doesNotMatch(result.chunks.join('|'), /Hello|world|sky|blue/);
		assert.equal(result.chunks.join(''), result.text);
		assert.equal(result.finish, 'length');
		assert.equal(result.tokens, 40);
	});

	test('a thought that uses up maxTokens ends with finish length and empty text', async () => {
		const model = await load('llamaEndless', 'fromHello');
		const result = await collect(model, { maxTokens: 5 });
		assert.deepEqual(
			{ text: result.text, finish: result.finish, tokens: result.tokens, chunks: result.chunks },
			{ text: '', finish: 'length', tokens: 5, chunks: [] },
		);
	});

	test('an answer that starts inside a thought shows only what follows the thought', async () => {
		const model = await load('llamaStops', 'openedOnStart');
		const result = await collect(model, { maxTokens: 100 });
		assert.equal(result.text, 'こんにちは。');
		assert.equal(result.finish, 'stop');
		assert.equal(result.chunks.join(''), result.text);
		// "Hello world" was generated too, as thought.
		assert.ok(result.tokens > model.countTokens('こんにちは。'), `${result.tokens} tokens`);
	});

	test('topK is handed to LlamaChat, and temperature 0 stays greedy with it', async (t) => {
		const model = await load('llamaEndless');
		// The tiny models' designed margins are too wide for any sampling setting to change their
		// output, so the hand-over itself is what can be checked.
		const seen: unknown[] = [];
		const original = LlamaChat.prototype.generateResponse;
		t.mock.method(LlamaChat.prototype, 'generateResponse', function (this: LlamaChat, ...args: Parameters<typeof original>) {
			seen.push(args[1]?.topK);
			return original.apply(this, args);
		});
		const greedy = await collect(model, { maxTokens: 24 });
		const withTopK = await collect(model, { maxTokens: 24, topK: 3 });
		assert.deepEqual(seen, [undefined, 3]);
		assert.equal(withTopK.text, greedy.text);
	});

	test('loadTokenizer counts exactly like the full model, text and prompts', async () => {
		const model = await load('llamaStops');
		const tokenizer = await loadTokenizer({ modelPath: models.llamaStops });
		try {
			for (const text of ['', 'Hello', 'Hello world、こんにちは。 How are you today?', '<|im_end|> <b>bold</b>\n改行']) {
				assert.equal(tokenizer.countTokens(text), model.countTokens(text), JSON.stringify(text));
			}
			assert.equal(tokenizer.countPromptTokens(conversation), model.countPromptTokens(conversation));
			assert.equal(tokenizer.countPromptTokens(conversation.slice(0, 2)), model.countPromptTokens(conversation.slice(0, 2)));
		} finally {
			await tokenizer.dispose();
		}
	});

	test('loadTokenizer rejects a missing file with an error naming the path', async () => {
		const missing = `${models.llamaStops}.missing`;
		await assert.rejects(loadTokenizer({ modelPath: missing }), (error: Error) => error.message.includes(missing));
	});
});
