import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { getLlama, LlamaChat, readGgufFileInfo, resolveChatWrapper } from 'node-llama-cpp';
import type { ChatWrapper, Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import type { AnswerProvider, GenerateOptions, GenerateResult } from './answer-provider.ts';
import { createPromptTokenizer, toChatHistory } from './load-tokenizer.ts';

export type { ChatMessage, GenerateOptions, GenerateResult } from './answer-provider.ts';

/** A GGUF chat model loaded on the CPU, answering through LlamaChat. */
export interface LanguageModel extends AnswerProvider {
	/** Actual context size, which llama.cpp may round up from the requested one. */
	readonly contextSize: number;
}

/** What {@link loadLanguageModel} loads and how. */
export interface LoadLanguageModelOptions {
	modelPath: string;
	/**
	 * CPU threads for evaluation. More is not always faster: on a 2-core machine a tiny model
	 * runs about 30 times slower with 2 threads than with 1, because thread synchronisation
	 * costs more than the arithmetic it splits.
	 */
	threads: number;
	/** Requested context size in tokens. */
	contextSize: number;
	/**
	 * Replaces the chat wrapper node-llama-cpp picks from the GGUF's template, for templates it
	 * misreads or to declare thought segments a template does not reveal.
	 */
	chatWrapper?: ChatWrapper;
	signal?: AbortSignal;
}

/** Loads a GGUF chat model on the CPU and wraps it as a streaming {@link LanguageModel}. */
export async function loadLanguageModel(options: LoadLanguageModelOptions): Promise<LanguageModel> {
	const { modelPath, threads, contextSize, chatWrapper, signal } = options;
	// node-llama-cpp treats 0 or a missing value as "use its default", which is 4 threads even
	// on a 2-core machine and makes generation orders of magnitude slower.
	if (!Number.isInteger(threads) || threads < 1) {
		throw new RangeError(`threads must be a positive integer, got ${threads}`);
	}
	if (!Number.isInteger(contextSize) || contextSize < 1) {
		throw new RangeError(`contextSize must be a positive integer, got ${contextSize}`);
	}
	await assertLoadableGguf(modelPath, signal);
	signal?.throwIfAborted();

	const llama = await getLlama({ gpu: false, build: 'never', maxThreads: threads });
	let model: LlamaModel | undefined;
	let context: LlamaContext | undefined;
	try {
		model = await llama.loadModel({ modelPath, gpuLayers: 0, loadSignal: signal });
		context = await model.createContext({ contextSize, threads, createSignal: signal });
	} catch (error) {
		await context?.dispose();
		await model?.dispose();
		await llama.dispose();
		throw error;
	}
	return createLanguageModel({
		name: `local:${basename(modelPath)}`,
		llama,
		model,
		context,
		chatWrapper: chatWrapper ?? resolveChatWrapper(model),
	});
}

// Absent, each of these either aborts the whole process inside llama.cpp (a GGML_ASSERT on a
// zero tensor dimension for feed_forward_length and head_count) or surfaces only as an
// unexplained "Failed to load model". Attention-free converters (Mamba) still write them, as 0.
function requiredMetadataKeys(architecture: string): string[] {
	return [
		`${architecture}.context_length`,
		`${architecture}.embedding_length`,
		`${architecture}.block_count`,
		`${architecture}.feed_forward_length`,
		`${architecture}.attention.head_count`,
		'tokenizer.ggml.model',
		'tokenizer.ggml.tokens',
	];
}

async function assertLoadableGguf(modelPath: string, signal: AbortSignal | undefined): Promise<void> {
	try {
		const stats = await stat(modelPath);
		if (!stats.isFile()) throw new Error('not a file');
	} catch {
		throw new Error(`Model file not found: ${modelPath}`);
	}
	let metadata: unknown;
	try {
		// Forcing the filesystem reader keeps a path that looks like a URL from going to the network.
		const info = await readGgufFileInfo(modelPath, {
			sourceType: 'filesystem',
			readTensorInfo: false,
			logWarnings: false,
			signal,
		});
		metadata = info.metadata;
	} catch (error) {
		signal?.throwIfAborted();
		const reason = error instanceof Error ? error.message : String(error);
		throw new Error(`Cannot read GGUF metadata from ${modelPath}: ${reason}`, { cause: error });
	}
	const architecture = readMetadataKey(metadata, 'general.architecture');
	if (typeof architecture !== 'string' || architecture === '') {
		throw new Error(`Invalid model file ${modelPath}: missing GGUF metadata key "general.architecture"`);
	}
	const missing = requiredMetadataKeys(architecture).filter((key) => readMetadataKey(metadata, key) === undefined);
	if (missing.length > 0) {
		const keys = missing.map((key) => `"${key}"`).join(', ');
		throw new Error(`Invalid model file ${modelPath}: missing GGUF metadata key${missing.length > 1 ? 's' : ''} ${keys}`);
	}
}

// The reader nests keys on dots but keeps some dotted keys flat when a shorter key already
// holds a value, so every split of the path has to be tried.
function readMetadataKey(node: unknown, key: string): unknown {
	if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
	const record = node as Record<string, unknown>;
	const parts = key.split('.');
	for (let length = parts.length; length >= 1; length--) {
		const head = parts.slice(0, length).join('.');
		if (!Object.hasOwn(record, head)) continue;
		if (length === parts.length) return record[head];
		const found = readMetadataKey(record[head], parts.slice(length).join('.'));
		if (found !== undefined) return found;
	}
	return undefined;
}

interface LanguageModelParts {
	name: string;
	llama: Llama;
	model: LlamaModel;
	context: LlamaContext;
	chatWrapper: ChatWrapper;
}

function createLanguageModel(parts: LanguageModelParts): LanguageModel {
	const { name, llama, model, context, chatWrapper } = parts;
	// One sequence and one LlamaChat for the model's lifetime: LlamaChat serialises concurrent
	// calls and reuses the KV cache for a shared prompt prefix (such as a fixed system prompt).
	// The prompt counter gets the same wrapper instance, so counts match what LlamaChat renders.
	const chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper, autoDisposeSequence: true });
	const tokenizer = createPromptTokenizer(model, chatWrapper);
	let disposing: Promise<void> | undefined;

	async function generate(options: GenerateOptions): Promise<GenerateResult> {
		const { messages, maxTokens, temperature = 0, topK, signal, onTextChunk } = options;
		// LlamaChat reads maxTokens 0 as "unlimited".
		if (!Number.isInteger(maxTokens) || maxTokens < 1) {
			throw new RangeError(`maxTokens must be a positive integer, got ${maxTokens}`);
		}
		let streamed = '';
		let tokens = 0;
		if (signal?.aborted) return { text: '', finish: 'cancelled', tokens: 0 };
		try {
			const response = await chat.generateResponse(toChatHistory(messages), {
				maxTokens,
				temperature,
				topK,
				signal,
				// Without this an abort throws away the text generated so far.
				stopOnAbortSignal: true,
				// onToken and onTextChunk see only the visible answer; thoughts use up maxTokens
				// too, so they are counted here, where every segment's tokens pass.
				onResponseChunk(chunk) {
					tokens += chunk.tokens.length;
				},
				// LlamaChat keeps thought segments (and their tags) out of this callback and out of
				// `response.response`, holding back text that may be the start of a segment tag.
				onTextChunk(text) {
					// LlamaChat sometimes flushes an empty chunk at the end.
					if (text === '') return;
					streamed += text;
					onTextChunk?.(text);
				},
			});
			const reason = response.metadata.stopReason;
			const finish = reason === 'maxTokens' ? 'length' : reason === 'abort' ? 'cancelled' : 'stop';
			// The tags that open and close a thought reach no chunk, but LlamaChat stops at exactly
			// maxTokens generated tokens, tags included.
			return { text: response.response, finish, tokens: finish === 'length' ? maxTokens : tokens };
		} catch (error) {
			// An abort before the first token (for example while waiting for the chat lock) throws.
			if (signal?.aborted) return { text: streamed, finish: 'cancelled', tokens };
			throw error;
		}
	}

	return {
		name,
		contextSize: context.contextSize,
		countTokens: tokenizer.countTokens,
		countPromptTokens: tokenizer.countPromptTokens,
		generate,
		dispose() {
			disposing ??= (async () => {
				chat.dispose();
				await context.dispose();
				await model.dispose();
				await llama.dispose();
			})();
			return disposing;
		},
	};
}
