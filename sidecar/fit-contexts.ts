import { truncateText, type CountTokens } from '../integration/split-text.ts';
import { buildPrompt, type PromptContext } from './build-prompt.ts';
import type { Language } from './detect-language.ts';
import type { ChatMessage } from './answer-provider.ts';

/** Options of {@link fitContexts}. */
export interface FitContextsOptions<C extends PromptContext> {
	question: string;
	lang: Language;
	/** Retrieved contexts, best first. */
	contexts: readonly C[];
	/** Most tokens the whole prompt may take. */
	budget: number;
	/** Tokens of a prompt as the model will see it, i.e. rendered with its chat template. */
	countPromptTokens: (messages: ChatMessage[]) => number;
	/** Tokens of a bare text, with the same model's tokenizer. */
	countTokens: CountTokens;
	/** A context trimmed to fewer tokens than this is dropped instead. @default 64 */
	minTokens?: number;
}

/** What {@link fitContexts} chose. */
export interface FittedContexts<C extends PromptContext> {
	/** A prefix of the ranked contexts, the last one possibly with its text trimmed. */
	contexts: C[];
	/**
	 * Tokens of buildPrompt over these contexts. Above the budget only when even the prompt
	 * without any context is, and then contexts is empty.
	 */
	promptTokens: number;
	/** Whether the last context's text was cut short. */
	trimmed: boolean;
}

// A text this many times longer in characters than the budget is in tokens is not counted whole
// just to learn that it does not fit; truncateText measures it by windows instead.
const WHOLE_COUNT_CHARS_PER_TOKEN = 16;
// Counts of a text and of the prompt around it need not add up, so a trimmed text that should fit
// may not; each retry shrinks its allowance by the overshoot, doubled every time.
const MAX_ATTEMPTS = 4;

/**
 * Picks the retrieved contexts for the answer prompt by real token counts: contexts go in rank
 * order while the whole prompt fits the budget; the first that does not fit is trimmed to the room
 * left, or dropped when fewer than minTokens would remain, and no later context is considered, so
 * a lower-ranked context never takes the place of a better one.
 */
export function fitContexts<C extends PromptContext>(options: FitContextsOptions<C>): FittedContexts<C> {
	const { question, lang, contexts, budget, countPromptTokens, countTokens, minTokens = 64 } = options;
	if (!(budget >= 0)) throw new RangeError(`fitContexts: budget must be at least 0, got ${budget}`);
	if (!(minTokens >= 0)) throw new RangeError(`fitContexts: minTokens must be at least 0, got ${minTokens}`);
	const promptTokensOf = (chosen: readonly PromptContext[]): number =>
		countPromptTokens(buildPrompt(question, chosen, lang));

	const chosen: C[] = [];
	let promptTokens = promptTokensOf(chosen);
	if (promptTokens > budget) return { contexts: chosen, promptTokens, trimmed: false };

	for (const context of contexts) {
		if (context.text.length <= budget * WHOLE_COUNT_CHARS_PER_TOKEN) {
			const tokens = promptTokensOf([...chosen, context]);
			if (tokens <= budget) {
				chosen.push(context);
				promptTokens = tokens;
				continue;
			}
		}

		const fitted = fitTrimmed(context, chosen, { budget, minTokens, countTokens, promptTokensOf });
		if (!fitted) break;
		chosen.push(fitted.context);
		promptTokens = fitted.promptTokens;
		if (fitted.trimmed) return { contexts: chosen, promptTokens, trimmed: true };
	}
	return { contexts: chosen, promptTokens, trimmed: false };
}

interface Limits {
	budget: number;
	minTokens: number;
	countTokens: CountTokens;
	promptTokensOf: (contexts: readonly PromptContext[]) => number;
}

interface Fitted<C> {
	context: C;
	promptTokens: number;
	trimmed: boolean;
}

/** The context cut to the room left after chosen, or undefined when less than minTokens would remain. */
function fitTrimmed<C extends PromptContext>(
	context: C,
	chosen: readonly C[],
	limits: Limits,
): Fitted<C> | undefined {
	const { budget, minTokens, countTokens, promptTokensOf } = limits;
	let allowance = budget - promptTokensOf([...chosen, { ...context, text: '' }]);
	for (let attempt = 0; attempt < MAX_ATTEMPTS && allowance >= 1; attempt++) {
		const text = truncateText(context.text, { maxTokens: allowance, countTokens });
		if (text === '') return undefined;
		// Only a text too long to have been counted whole first can come back whole here, and a
		// whole text is worth adding however short it is.
		const trimmed = text.length < context.text.trim().length;
		const textTokens = countTokens(text);
		if (trimmed && textTokens < minTokens) return undefined;
		const candidate: C = trimmed ? { ...context, text } : context;
		const promptTokens = promptTokensOf([...chosen, candidate]);
		if (promptTokens <= budget) return { context: candidate, promptTokens, trimmed };
		allowance = Math.min(allowance, textTokens) - (promptTokens - budget) * 2 ** attempt;
	}
	return undefined;
}
