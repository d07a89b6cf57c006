import type { AnswerProvider } from './answer-provider.ts';
import { buildPrompt } from './build-prompt.ts';
import { detectLanguage } from './detect-language.ts';
import { fitContexts } from './fit-contexts.ts';
import { createTokenFlusher } from './flush-tokens.ts';
import type { Context, KnowledgeBase } from './knowledge-base.ts';
import { noContextMessage, truncatedNotice } from './messages.ts';
import type { FinishReason, ServerMessage } from './protocol.ts';

/** One visitor's question: by the chunk ids the browser found, or by the sidecar's own search. */
export type Question =
	| { mode: 'ids'; question: string; chunkIds: readonly string[]; kbVersion: string }
	| { mode: 'query'; question: string };

/** How answers are made: the same for every job of a sidecar. */
export interface AnswerSettings {
	maxTokens: number;
	temperature: number;
	topK: number;
	maxDistance: number;
	/** Tokens kept free besides the answer, for the template's own tokens and rounding. */
	margin: number;
	/** A context trimmed to fewer tokens than this is dropped instead. */
	minContextTokens: number;
	/** Characters that end a streamed frame early (besides reaching 8 characters). */
	flushChars: string;
}

/** What answering needs besides the question. */
export interface AnswerDependencies {
	provider: AnswerProvider;
	knowledgeBase: KnowledgeBase;
	/** The content version the sidecar serves; ids from another kb.json point at other text. */
	kbVersion: string | null;
	/** Embeds a question for the sidecar's own search (loaded on first use). */
	embedQuery: (question: string) => Promise<Float32Array>;
	settings: AnswerSettings;
	send: (message: ServerMessage) => void;
	signal: AbortSignal;
}

/** What happened, for the Q&A log and the metrics. */
export interface AnswerOutcome {
	mode: 'ids' | 'query';
	chunkIds: string[];
	answer: string;
	finish: FinishReason;
	tokens: number;
	ttftMs: number | null;
	durationMs: number;
}

/**
 * Answers one question: finds its contexts (the browser's ids in the browser's order, or a search), fits them
 * into the model's context window by real token counts, and streams the model's answer as `token` frames.
 */
export async function answerQuestion(question: Question, deps: AnswerDependencies): Promise<AnswerOutcome> {
	const started = performance.now();
	const { provider, settings, send, signal } = deps;
	const lang = detectLanguage(question.question);

	let mode: 'ids' | 'query' = 'query';
	let contexts: Context[] = [];
	// A kb.json of another build would point at other text, so its ids are not trusted.
	if (question.mode === 'ids' && question.kbVersion === deps.kbVersion) {
		contexts = await deps.knowledgeBase.byIds(question.chunkIds);
		if (contexts.length > 0) mode = 'ids';
	}
	if (mode === 'query') {
		const embedding = await deps.embedQuery(question.question);
		contexts = await deps.knowledgeBase.search(embedding, { topK: settings.topK, maxDistance: settings.maxDistance });
	}
	signal.throwIfAborted();

	const budget = provider.contextSize - settings.maxTokens - settings.margin;
	const fitted = fitContexts({
		question: question.question,
		lang,
		contexts,
		budget,
		countPromptTokens: (messages) => provider.countPromptTokens(messages),
		countTokens: (text) => provider.countTokens(text),
		minTokens: settings.minContextTokens,
	});
	const chosen = fitted.contexts;
	send({
		type: 'contexts',
		mode,
		items: chosen.map(({ id, title, url, distance }) => ({ id, title, url, ...(distance === undefined ? {} : { distance }) })),
	});
	const chunkIds = chosen.map((context) => context.id);

	if (chosen.length === 0) {
		// Without a context the model could only make things up, so it is not asked at all.
		send({ type: 'notice', code: 'NO_CONTEXT', content: noContextMessage(lang) });
		send({ type: 'done', finish: 'no_context', stats: { ttft_ms: null, tokens: 0, tokens_per_s: null } });
		return { mode, chunkIds, answer: '', finish: 'no_context', tokens: 0, ttftMs: null, durationMs: performance.now() - started };
	}

	let firstToken: number | undefined;
	const flusher = createTokenFlusher({
		send: (content) => send({ type: 'token', content }),
		breakChars: settings.flushChars,
	});
	const generationStarted = performance.now();
	const result = await provider.generate({
		messages: buildPrompt(question.question, chosen, lang),
		maxTokens: settings.maxTokens,
		temperature: settings.temperature,
		signal,
		onTextChunk(text) {
			firstToken ??= performance.now();
			flusher.push(text);
		},
	});
	flusher.end();
	if (result.finish === 'length') send({ type: 'notice', code: 'TRUNCATED', content: truncatedNotice(lang) });

	const ttftMs = firstToken === undefined ? null : Math.round(firstToken - started);
	const seconds = firstToken === undefined ? 0 : (performance.now() - firstToken) / 1000;
	const tokensPerSecond = seconds > 0 && result.tokens > 1 ? (result.tokens - 1) / seconds : null;
	send({
		type: 'done',
		finish: result.finish,
		stats: { ttft_ms: ttftMs, tokens: result.tokens, tokens_per_s: tokensPerSecond === null ? null : Math.round(tokensPerSecond * 10) / 10 },
	});
	return {
		mode,
		chunkIds,
		answer: result.text,
		finish: result.finish,
		tokens: result.tokens,
		ttftMs,
		durationMs: performance.now() - generationStarted,
	};
}
