import type { AnswerProvider, ChatMessage, GenerateOptions, GenerateResult } from './answer-provider.ts';
import { createThinkFilter } from './think-filter.ts';

/** Where and how {@link createOpenAiProvider} reaches its server. */
export interface OpenAiProviderOptions {
	/** The API root, e.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended. */
	baseUrl: string;
	model: string;
	/** Sent as a bearer token; never written into errors. */
	apiKey?: string;
	/** The served model's context size in tokens; the server does not report it. */
	contextSize: number;
	/** The served model's own token counts (see `loadTokenizer`); without it, counts are estimated high. */
	tokenizer?: {
		countTokens(text: string): number;
		countPromptTokens?(messages: readonly ChatMessage[]): number;
	};
	/**
	 * The server passes the model's raw text through and its chat template already opens
	 * `<think>` in the prompt, so every answer begins inside a thought.
	 * @default false
	 */
	startsInsideThought?: boolean;
	/** Longest silence from the server, while connecting or streaming, before the answer fails. @default 60000 */
	idleTimeoutMs?: number;
}

// A chat template wraps every message in a few tokens of role markers.
const MESSAGE_OVERHEAD_TOKENS = 8;

/** Answers through an OpenAI-compatible `/chat/completions` endpoint, streamed over server-sent events. */
export function createOpenAiProvider(options: OpenAiProviderOptions): AnswerProvider {
	const { model, apiKey, contextSize, tokenizer, startsInsideThought = false, idleTimeoutMs = 60_000 } = options;
	if (!Number.isInteger(contextSize) || contextSize < 1) {
		throw new RangeError(`contextSize must be a positive integer, got ${contextSize}`);
	}
	const endpoint = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`);
	// Credentials in the URL would otherwise end up in every error message.
	endpoint.username = '';
	endpoint.password = '';
	const url = endpoint.href;
	const countTokens = tokenizer ? (text: string) => tokenizer.countTokens(text) : estimateTokens;
	const lifetime = new AbortController();

	async function generate(generateOptions: GenerateOptions): Promise<GenerateResult> {
		const { messages, maxTokens, temperature = 0, topK, signal, onTextChunk } = generateOptions;
		if (!Number.isInteger(maxTokens) || maxTokens < 1) {
			throw new RangeError(`maxTokens must be a positive integer, got ${maxTokens}`);
		}
		if (lifetime.signal.aborted) throw new Error(`The provider for ${url} was disposed`);
		if (signal?.aborted) return { text: '', finish: 'cancelled', tokens: 0 };

		const filter = createThinkFilter({ startsInside: startsInsideThought });
		let text = '';
		let raw = '';
		let usageTokens: number | undefined;
		let finishReason: string | undefined;
		const show = (visible: string): void => {
			if (visible === '') return;
			text += visible;
			onTextChunk?.(visible);
		};
		const result = (finish: GenerateResult['finish']): GenerateResult => {
			show(filter.end());
			return { text, finish, tokens: usageTokens ?? (raw === '' ? 0 : countTokens(raw)) };
		};

		// A server that stalls mid-answer would otherwise hold the one running job, and the whole queue, for ever.
		const idle = new AbortController();
		let idleTimer = setTimeout(() => idle.abort(), idleTimeoutMs);
		const stalled = () => new Error(`${url} sent nothing for ${idleTimeoutMs / 1000} s`);
		const requestSignal = AbortSignal.any([...(signal ? [signal] : []), lifetime.signal, idle.signal]);
		const body: Record<string, unknown> = {
			model,
			messages: messages.map(({ role, content }) => ({ role, content })),
			stream: true,
			stream_options: { include_usage: true },
			max_tokens: maxTokens,
			temperature,
		};
		// Not part of OpenAI's own API, and OpenAI rejects unknown fields; llama.cpp and vLLM accept it.
		if (topK !== undefined) body.top_k = topK;
		const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
		if (apiKey) headers.authorization = `Bearer ${apiKey}`;

		let response: Response;
		try {
			response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: requestSignal });
		} catch (error) {
			clearTimeout(idleTimer);
			if (idle.signal.aborted) throw stalled();
			if (requestSignal.aborted) return result('cancelled');
			throw new Error(`Cannot reach ${url}: ${describe(error)}`, { cause: error });
		}
		if (!response.ok || response.body === null) {
			const detail = scrub(await response.text().catch(() => ''), apiKey).trim().slice(0, 300);
			const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
			throw new Error(`POST ${url} failed with HTTP ${status}${detail ? `: ${detail}` : ''}`);
		}

		const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
		const events = createEventParser();
		let done = false;
		try {
			while (!done) {
				const { value, done: ended } = await reader.read();
				clearTimeout(idleTimer);
				idleTimer = setTimeout(() => idle.abort(), idleTimeoutMs);
				for (const data of ended ? events.end() : events.push(value)) {
					// One network chunk can hold several events; none may be shown after an abort.
					if (idle.signal.aborted) throw stalled();
					if (requestSignal.aborted) return result('cancelled');
					if (data === '[DONE]') {
						done = true;
						break;
					}
					const chunk = parseChunk(data, url, apiKey);
					if (typeof chunk.usage?.completion_tokens === 'number') usageTokens = chunk.usage.completion_tokens;
					const choice = chunk.choices?.[0];
					if (!choice) continue;
					// delta.reasoning_content and delta.reasoning carry thoughts the server already
					// separated; they count as generated tokens but are never shown.
					const reasoning = choice.delta?.reasoning_content ?? choice.delta?.reasoning;
					if (typeof reasoning === 'string') raw += reasoning;
					const content = choice.delta?.content;
					if (typeof content === 'string' && content !== '') {
						raw += content;
						show(filter.push(content));
					}
					if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
				}
				if (ended) break;
			}
		} catch (error) {
			if (idle.signal.aborted) throw stalled();
			if (requestSignal.aborted) return result('cancelled');
			throw error;
		} finally {
			clearTimeout(idleTimer);
			// Stops the download if we left early; a no-op once the stream has ended.
			reader.cancel().catch(() => {});
		}
		if (finishReason === undefined && !done) {
			throw new Error(`The stream from ${url} ended before the answer finished`);
		}
		return result(finishReason === 'length' ? 'length' : 'stop');
	}

	return {
		name: `openai:${model}@${endpoint.host}`,
		contextSize,
		countTokens,
		countPromptTokens(messages) {
			if (tokenizer?.countPromptTokens) return tokenizer.countPromptTokens(messages);
			let total = 0;
			for (const message of messages) total += MESSAGE_OVERHEAD_TOKENS + countTokens(message.content);
			return total;
		},
		generate,
		async dispose() {
			lifetime.abort();
		},
	};
}

/**
 * Overestimates tokens without a vocabulary: a character that UTF-8 spends three or more bytes
 * on (CJK, kana, Hangul, emoji…) rarely shares a token, while Latin-script text averages
 * somewhat over three characters per token.
 */
function estimateTokens(text: string): number {
	let wide = 0;
	let narrow = 0;
	for (const character of text) {
		if (character.codePointAt(0)! >= 0x800) wide++;
		else narrow++;
	}
	return wide + Math.ceil(narrow / 3);
}

interface StreamChunk {
	choices?: Array<{
		delta?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown };
		finish_reason?: unknown;
	}>;
	usage?: { completion_tokens?: unknown };
	error?: unknown;
}

function parseChunk(data: string, url: string, apiKey: string | undefined): StreamChunk {
	let chunk: StreamChunk;
	try {
		chunk = JSON.parse(data) as StreamChunk;
	} catch {
		throw new Error(`Unreadable event in the stream from ${url}: ${scrub(data, apiKey).slice(0, 200)}`);
	}
	if (chunk === null || typeof chunk !== 'object') {
		throw new Error(`Unexpected event in the stream from ${url}: ${scrub(data, apiKey).slice(0, 200)}`);
	}
	// Servers that fail after the headers were sent report it as an event of their own.
	if (chunk.error !== undefined) {
		const error = chunk.error as { message?: unknown };
		const message = typeof error?.message === 'string' ? error.message : JSON.stringify(chunk.error);
		throw new Error(`The server at ${url} failed mid-stream: ${scrub(message, apiKey)}`);
	}
	return chunk;
}

// Server-sent events: `data:` lines accumulate until a blank line dispatches them; lines starting
// with `:` are comments (often keep-alives), and other fields (`event:`, `id:`) carry nothing we use.
// Network chunks split lines anywhere, so an unterminated line waits for the next chunk.
function createEventParser(): { push(text: string): string[]; end(): string[] } {
	let buffer = '';
	let data: string[] = [];
	const events: string[] = [];
	const takeLine = (line: string): void => {
		if (line === '') {
			if (data.length > 0) events.push(data.join('\n'));
			data = [];
		} else if (line.startsWith('data:')) {
			data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
		}
	};
	const take = (): string[] => events.splice(0);
	return {
		push(text) {
			buffer += text;
			for (;;) {
				const match = /\r\n|\r|\n/.exec(buffer);
				// A lone \r at the end may be the first half of \r\n.
				if (!match || (match[0] === '\r' && match.index === buffer.length - 1)) break;
				takeLine(buffer.slice(0, match.index));
				buffer = buffer.slice(match.index + match[0].length);
			}
			return take();
		},
		// A server that closes without the final blank line still meant its last event.
		end() {
			takeLine(buffer.replace(/\r$/, ''));
			buffer = '';
			takeLine('');
			return take();
		},
	};
}

function scrub(text: string, apiKey: string | undefined): string {
	return apiKey ? text.replaceAll(apiKey, '[api key]') : text;
}

function describe(error: unknown): string {
	if (!(error instanceof Error)) return String(error);
	const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
	return `${error.message}${cause}`;
}
