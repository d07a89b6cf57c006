import { stat } from 'node:fs/promises';
import { getLlama, isLlamaText, LlamaText, resolveChatWrapper } from 'node-llama-cpp';
import type { ChatHistoryItem, ChatModelSegment, ChatWrapper, LlamaModel } from 'node-llama-cpp';
import type { ChatMessage } from './answer-provider.ts';

/** Token counts of a GGUF model's vocabulary and chat template. */
export interface PromptTokenizer {
	countTokens(text: string): number;
	/** Tokens of the whole prompt as LlamaChat would evaluate it, generation prompt included. */
	countPromptTokens(messages: readonly ChatMessage[]): number;
}

/** A {@link PromptTokenizer} that owns the vocabulary it loaded. */
export interface LoadedTokenizer extends PromptTokenizer {
	dispose(): Promise<void>;
}

/**
 * Loads only a GGUF's vocabulary and chat template, so a remote provider serving the same model
 * can budget prompts in the model's own tokens without loading any weights.
 */
export async function loadTokenizer(options: { modelPath: string }): Promise<LoadedTokenizer> {
	const { modelPath } = options;
	try {
		if (!(await stat(modelPath)).isFile()) throw new Error('not a file');
	} catch {
		throw new Error(`Tokenizer model file not found: ${modelPath}`);
	}
	// Nothing is evaluated, but node-llama-cpp would still size its thread pool to 4 by default.
	const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 1 });
	let model: LlamaModel;
	try {
		model = await llama.loadModel({ modelPath, vocabOnly: true, gpuLayers: 0 });
	} catch (error) {
		await llama.dispose();
		throw error;
	}
	const tokenizer = createPromptTokenizer(model, resolveChatWrapper(model));
	let disposing: Promise<void> | undefined;
	return {
		...tokenizer,
		dispose() {
			disposing ??= (async () => {
				await model.dispose();
				await llama.dispose();
			})();
			return disposing;
		},
	};
}

/**
 * Counts with an already loaded model and the chat wrapper its LlamaChat uses, so a local
 * provider's counts are exactly what it evaluates.
 */
export function createPromptTokenizer(model: LlamaModel, chatWrapper: ChatWrapper): PromptTokenizer {
	const openedThought = thoughtOpenedOnResponseStart(chatWrapper);
	return {
		countTokens: (text) => model.tokenize(text, false).length,
		countPromptTokens(messages) {
			const history = toChatHistory(messages);
			// LlamaChat opens such a thought before the first token and re-renders the prompt with
			// it, so the prefix it adds is part of what gets evaluated.
			if (openedThought !== undefined) history[history.length - 1] = { type: 'model', response: [openedThought] };
			const { contextText } = chatWrapper.generateContextState({ chatHistory: history });
			return contextText.tokenize(model.tokenizer).length;
		},
	};
}

/** The LlamaChat history for `messages`, ending in the empty model turn the answer is written into. */
export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
	const history: ChatHistoryItem[] = messages.map((message): ChatHistoryItem => {
		switch (message.role) {
			case 'system':
				return { type: 'system', text: message.content };
			case 'user':
				return { type: 'user', text: message.content };
			case 'assistant':
				return { type: 'model', response: [message.content] };
		}
	});
	history.push({ type: 'model', response: [] });
	return history;
}

// Mirrors LlamaChat's decision to open a thought as soon as the answer starts: either the
// template's generation prompt already opens it, or the wrapper asks for its prefix to be added.
function thoughtOpenedOnResponseStart(chatWrapper: ChatWrapper): ChatModelSegment | undefined {
	const thought = chatWrapper.settings.segments?.thought;
	if (thought === undefined) return undefined;
	const openedByTemplate = typeof thought.prefix === 'object' && !isLlamaText(thought.prefix);
	if (!openedByTemplate && thought.openOnResponseStart !== true) return undefined;
	const prefix = openedByTemplate ? '' : (thought.prefix as string | LlamaText);
	return { type: 'segment', segmentType: 'thought', text: '', ended: false, raw: LlamaText([prefix]).toJSON() };
}
