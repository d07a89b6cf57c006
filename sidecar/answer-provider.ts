/** One turn of a conversation, in the roles every chat template and OpenAI-compatible server know. */
export interface ChatMessage {
	role: 'system' | 'user' | 'assistant';
	content: string;
}

/** What {@link AnswerProvider.generate} is asked to do. */
export interface GenerateOptions {
	/** The conversation so far; the model writes the next assistant turn. */
	messages: readonly ChatMessage[];
	/** Upper bound on generated tokens, thoughts included; the answer ends with finish `length` when reached. */
	maxTokens: number;
	/** 0 (the default) is greedy decoding. */
	temperature?: number;
	/** Sample only among the K likeliest tokens; unset leaves the provider's default. */
	topK?: number;
	signal?: AbortSignal;
	/** Receives the visible answer as it is generated; a reasoning model's thoughts never arrive here. */
	onTextChunk?: (text: string) => void;
}

/** How a generation ended and what it produced. */
export interface GenerateResult {
	/** The visible answer: the streamed chunks joined, without any thoughts. */
	text: string;
	finish: 'stop' | 'length' | 'cancelled';
	/** Tokens the model generated, thoughts included, since they use up `maxTokens` as well. */
	tokens: number;
}

/** A source of streamed answers: a local GGUF model or a remote OpenAI-compatible server. */
export interface AnswerProvider {
	/** Identifies the backend in logs and stats, e.g. `local:model.gguf` or `openai:<model>@<host>`. */
	readonly name: string;
	/** Tokens of prompt and answer together that the model can attend to. */
	readonly contextSize: number;
	countTokens(text: string): number;
	/** Tokens of the whole prompt as the model's chat template renders it, generation prompt included. */
	countPromptTokens(messages: readonly ChatMessage[]): number;
	generate(options: GenerateOptions): Promise<GenerateResult>;
	dispose(): Promise<void>;
}
