// Browser-safe: the build chunks articles with this and the sidecar trims context with it,
// so it must stay pure logic with no node: imports.

/** Counts the tokens of a text with the tokenizer of the model the text is meant for. */
export type CountTokens = (text: string) => number;

/** Options of {@link splitText}. */
export interface SplitTextOptions {
	/** Largest size of a chunk, in tokens as counted by countTokens. */
	maxTokens: number;
	/** Tokens of the previous chunk's end repeated at the start of the next one. @default 0 */
	overlapTokens?: number;
	/** Tokenizer of the model the chunks are for; called on trimmed candidates, so it may be slow but not async. */
	countTokens: CountTokens;
}

/** Options of {@link truncateText}. */
export interface TruncateTextOptions {
	/** Largest size of the result, in tokens as counted by countTokens. 0 always gives ''. */
	maxTokens: number;
	/** Tokenizer of the model the result is for, called only on a window of the text a few times larger than maxTokens. */
	countTokens: CountTokens;
	/** below this, give up and return '' @default 1 */
	minTokens?: number;
}

const PARAGRAPH = 0;
const SPACE = 4;
const GRAPHEME = 5;

// Coarsest first; each cut falls right after its match, so a mark stays with the part it ends.
// The grapheme level (index GRAPHEME) has no pattern: Intl.Segmenter provides its cuts.
const SEPARATORS: readonly RegExp[] = [
	/\n[^\S\n]*\n\s*/g,
	/\n/g,
	// Closing brackets and quotes belong to the sentence they close; an ASCII mark only ends a
	// sentence before whitespace, so 3.14, example.com and ?q=1 stay whole.
	/[。！？]+[」』）〕】"'”’)\]]*|[.!?]+[)"'”’\]]*(?=\s|$)/g,
	// An ASCII comma needs a following space, so 1,000,000 is not a clause list.
	/[、，]|,(?=\s)/g,
	/\s+/g,
];

// Characters that join the grapheme before them (UAX #29 rules GB9, GB9a). A separator match
// followed by one of these is not a safe place to cut.
const JOINS_PREVIOUS = /^[\p{Grapheme_Extend}\p{Emoji_Modifier}\p{Mc}\u200D]/u;
const WHITESPACE = /\s/;

// Long enough to estimate characters per token before the first real cut.
const SAMPLE_CHARS = 4096;
// A range far longer than its budget could need is proven too big from a prefix of this many
// estimated budgets, so an oversized piece is never tokenized whole just to be rejected.
const PROBE_BUDGETS = 4;
const PROBE_MIN_CHARS = 256;
// Interpolation usually lands within a candidate or two; after this many rounds the search
// gallops or bisects so a tokenizer that defeats the estimate costs O(log n) counts, not O(n).
const INTERPOLATION_ROUNDS = 2;
// No real tokenizer averages more than this many characters per token on prose or code; a
// tokenizer that does is handled by widening the window.
const WINDOW_CHARS_PER_TOKEN = 8;
const WINDOW_MIN_CHARS = 256;
const WINDOW_ROUNDS = 4;
// truncateText settles for a coarser boundary only while it keeps this share of the budget.
const MIN_FILL = 0.9;

interface Context {
	text: string;
	countTokens: CountTokens;
	/** Characters per token of the latest measured range: the text's own, local ratio. */
	charsPerToken: number;
}

interface Fit {
	/** Index of the largest fitting candidate, -1 when even the smallest does not fit. */
	index: number;
	tokens: number;
}

interface Chunk {
	start: number;
	end: number;
	level: number;
}

interface Tail {
	start: number;
	level: number;
}

interface SplitState {
	ctx: Context;
	maxTokens: number;
	overlapTokens: number;
	chunks: string[];
	previous: Chunk | null;
	/** Tail of previous, computed on first need; null when no tail fits. */
	tail: Tail | null | undefined;
}

let segmenter: Intl.Segmenter | undefined;

function graphemeSegmenter(): Intl.Segmenter {
	segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
	return segmenter;
}

function isGraphemeBoundary(text: string, index: number): boolean {
	if (index <= 0 || index >= text.length) return true;
	const code = text.charCodeAt(index);
	if (code >= 0xdc00 && code <= 0xdfff) {
		const before = text.charCodeAt(index - 1);
		if (before >= 0xd800 && before <= 0xdbff) return false;
	}
	return !JOINS_PREVIOUS.test(text.slice(index, index + 2));
}

// Own trim instead of String#trim: a whitespace character carrying a combining mark is one
// grapheme, and trimming its space would split it.
function trimStart(text: string, from: number, to: number): number {
	let index = from;
	while (index < to && WHITESPACE.test(text[index]!) && isGraphemeBoundary(text, index + 1)) index++;
	return index;
}

function trimEnd(text: string, from: number, to: number): number {
	let index = to;
	while (index > from && WHITESPACE.test(text[index - 1]!)) index--;
	return index;
}

function trimmed(text: string, from: number, to: number): string {
	const start = trimStart(text, from, to);
	return text.slice(start, trimEnd(text, start, to));
}

// For cuts that are only ever counted, never returned: keeps a surrogate pair whole so the
// tokenizer does not see a replacement character.
function surrogateSafe(text: string, index: number): number {
	const before = text.charCodeAt(index - 1);
	return before >= 0xd800 && before <= 0xdbff ? index - 1 : index;
}

/** Cut positions of one separator level strictly inside [start, end), ascending. */
function boundaries(text: string, level: number, start: number, end: number): number[] {
	const cuts: number[] = [];
	const slice = text.slice(start, end);
	if (level === GRAPHEME) {
		for (const { index } of graphemeSegmenter().segment(slice)) if (index > 0) cuts.push(start + index);
		return cuts;
	}
	for (const match of slice.matchAll(SEPARATORS[level]!)) {
		const cut = start + match.index + match[0].length;
		if (cut < end && isGraphemeBoundary(text, cut)) cuts.push(cut);
	}
	return cuts;
}

function count(ctx: Context, piece: string): number {
	const tokens = ctx.countTokens(piece);
	if (tokens > 0 && piece.length > 0) ctx.charsPerToken = piece.length / tokens;
	return tokens;
}

/** Tokens of the trimmed range, or of a prefix of it once that prefix alone exceeds budget. */
function measure(ctx: Context, from: number, to: number, budget: number): number {
	const probe = Math.max(PROBE_MIN_CHARS, Math.ceil(budget * ctx.charsPerToken * PROBE_BUDGETS));
	if (to - from > 2 * probe) {
		const tokens = count(ctx, trimmed(ctx.text, from, surrogateSafe(ctx.text, from + probe)));
		if (tokens > budget) return tokens;
	}
	return count(ctx, trimmed(ctx.text, from, to));
}

/** Largest k with sizeAt(k) <= limit, -1 when none; sizeAt must be ascending. */
function largestWithin(n: number, sizeAt: (k: number) => number, limit: number): number {
	let lo = -1;
	let hi = n;
	while (lo + 1 < hi) {
		const mid = (lo + hi) >> 1;
		if (sizeAt(mid) <= limit) lo = mid;
		else hi = mid;
	}
	return lo;
}

/**
 * Largest candidate whose measure fits budget, with candidates ordered by ascending size.
 * Guesses from the characters-per-token estimate, refines it with each count, and falls back to
 * galloping or bisection so the number of counts stays logarithmic at worst. Token counts are
 * assumed roughly monotone in size; the answer is always a measured fit either way.
 */
function findLargest(
	ctx: Context,
	n: number,
	sizeAt: (k: number) => number,
	measureAt: (k: number) => number,
	budget: number,
): Fit {
	let lo = -1;
	let loTokens = 0;
	let hi = n;
	let pick = largestWithin(n, sizeAt, budget * ctx.charsPerToken);
	for (let round = 1; lo + 1 < hi; round++) {
		pick = Math.min(Math.max(pick, lo + 1), hi - 1);
		const tokens = measureAt(pick);
		if (tokens <= budget) {
			lo = pick;
			loTokens = tokens;
		} else {
			hi = pick;
		}
		if (round <= INTERPOLATION_ROUNDS) pick = largestWithin(n, sizeAt, budget * ctx.charsPerToken);
		else if (hi === n) pick = lo + 2 ** (round - INTERPOLATION_ROUNDS);
		else pick = (lo + hi) >> 1;
	}
	return { index: lo, tokens: loTokens };
}

/** Largest cuts[k], k >= first, such that the trimmed text from `from` to it fits budget. */
function fitEnd(ctx: Context, from: number, cuts: number[], first: number, budget: number): Fit {
	const fit = findLargest(
		ctx,
		cuts.length - first,
		(k) => cuts[first + k]! - from,
		(k) => measure(ctx, from, cuts[first + k]!, budget),
		budget,
	);
	return fit.index < 0 ? fit : { index: first + fit.index, tokens: fit.tokens };
}

function emit(state: SplitState, from: number, to: number, level: number): void {
	const { text } = state.ctx;
	const start = trimStart(text, from, to);
	const end = trimEnd(text, start, to);
	state.chunks.push(text.slice(start, end));
	state.previous = { start, end, level };
	state.tail = undefined;
}

/**
 * The longest suffix of the previous chunk, in whole units of the level its end was cut at, that
 * fits overlapTokens. When not even one such unit fits, finer units are tried.
 */
function currentTail(state: SplitState): Tail | null {
	if (state.overlapTokens <= 0 || !state.previous) return null;
	if (state.tail !== undefined) return state.tail;
	const { start, end, level } = state.previous;
	state.tail = longestSuffix(state.ctx, start, end, end, level, GRAPHEME, state.overlapTokens);
	return state.tail;
}

/**
 * The earliest boundary in text[start, end), at the first level from `fromLevel` to `toLevel` that has one,
 * from which text up to `measuredEnd` still fits `budget` tokens; null when none does.
 */
function longestSuffix(
	ctx: Context,
	start: number,
	end: number,
	measuredEnd: number,
	fromLevel: number,
	toLevel: number,
	budget: number,
): Tail | null {
	for (let level = fromLevel; level <= toLevel; level++) {
		const starts = boundaries(ctx.text, level, start, end);
		const last = starts.length - 1;
		const fit = findLargest(
			ctx,
			starts.length,
			(k) => measuredEnd - starts[last - k]!,
			(k) => measure(ctx, starts[last - k]!, measuredEnd, budget),
			budget,
		);
		if (fit.index >= 0) return { start: starts[last - fit.index]!, level };
	}
	return null;
}

/**
 * Where the chunk ending at pieceEnd should start so that it fits maxTokens with the longest
 * shorter tail, trying the tail's own level first, then finer ones down to words: a natural piece
 * kept whole is worth more than a full overlap, but a tail of word fragments is worth nothing.
 * -1 when even the shortest tail does not leave room for it.
 */
function shrinkTail(state: SplitState, tail: Tail, pieceEnd: number): number {
	const { ctx, maxTokens } = state;
	const shorter = longestSuffix(ctx, tail.start, state.previous!.end, pieceEnd, tail.level, Math.max(tail.level, SPACE), maxTokens);
	return shorter ? shorter.start : -1;
}

function splitRange(state: SplitState, start: number, end: number, level: number): void {
	const { ctx, maxTokens } = state;
	const { text } = ctx;
	const cuts = boundaries(text, level, start, end);
	if (cuts.length === 0 && level < GRAPHEME) {
		splitRange(state, start, end, level + 1);
		return;
	}
	cuts.push(end);
	let position = start;
	let next = 0;
	while (next < cuts.length) {
		const bodyStart = trimStart(text, position, end);
		if (trimEnd(text, bodyStart, end) === bodyStart) return;
		// A candidate must reach past the leading whitespace, so every chunk has content.
		while (cuts[next]! <= bodyStart) next++;
		const tail = currentTail(state);
		let chunkStart = tail ? tail.start : bodyStart;
		let fit = fitEnd(ctx, chunkStart, cuts, next, maxTokens);
		if (fit.index < 0 && tail) {
			const shorter = shrinkTail(state, tail, cuts[next]!);
			if (shorter >= 0) {
				chunkStart = shorter;
				fit = fitEnd(ctx, chunkStart, cuts, next, maxTokens);
			}
		}
		if (fit.index < 0) {
			if (level < GRAPHEME) {
				splitRange(state, position, cuts[next]!, level + 1);
				position = cuts[next]!;
				next++;
				continue;
			}
			// No tail leaves room for this grapheme: it goes without overlap, and when it is over
			// the budget even alone it is still returned whole, since splitting it would corrupt it.
			chunkStart = bodyStart;
			fit = fitEnd(ctx, chunkStart, cuts, next, maxTokens);
			if (fit.index < 0) fit = { index: next, tokens: 0 };
		}
		emit(state, chunkStart, cuts[fit.index]!, level);
		position = cuts[fit.index]!;
		next = fit.index + 1;
	}
}

/**
 * Splits text into chunks of at most maxTokens tokens at the most natural boundaries available.
 *
 * Boundaries, coarsest first: blank line, line break, sentence end, clause mark, space, grapheme
 * cluster. Without overlap the chunks concatenate back to the text apart from whitespace trimmed at
 * their edges. With overlap, each later chunk starts with a tail of the previous one, in whole
 * units of the level that chunk was cut at. A single grapheme cluster larger than maxTokens is the
 * only thing ever returned over budget, as its own chunk.
 * @throws {RangeError} when maxTokens is below 1 or overlapTokens is negative or not below maxTokens.
 */
export function splitText(text: string, options: SplitTextOptions): string[] {
	const { maxTokens, overlapTokens = 0, countTokens } = options;
	if (!(maxTokens >= 1)) throw new RangeError(`splitText: maxTokens must be at least 1, got ${maxTokens}`);
	if (!(overlapTokens >= 0 && overlapTokens < maxTokens)) {
		throw new RangeError(
			`splitText: overlapTokens must be at least 0 and below maxTokens (${maxTokens}), got ${overlapTokens}`,
		);
	}
	const start = trimStart(text, 0, text.length);
	const end = trimEnd(text, start, text.length);
	if (start === end) return [];
	const ctx: Context = { text, countTokens, charsPerToken: 1 };
	const sampleEnd = end - start <= SAMPLE_CHARS ? end : surrogateSafe(text, start + SAMPLE_CHARS);
	const sampleTokens = count(ctx, trimmed(text, start, sampleEnd));
	if (sampleEnd === end && sampleTokens <= maxTokens) return [text.slice(start, end)];
	const state: SplitState = { ctx, maxTokens, overlapTokens, chunks: [], previous: null, tail: undefined };
	splitRange(state, start, end, PARAGRAPH);
	return state.chunks;
}

/**
 * Returns the longest leading part of text, cut at the largest natural boundary, whose token count is at most maxTokens.
 *
 * "Largest" is the coarsest boundary level (same order as {@link splitText}) that still fills at
 * least 90% of maxTokens; finer levels are tried only when a coarser one would waste more. The end
 * of the text counts as a boundary. Returns '' when fewer than minTokens tokens fit.
 * @throws {RangeError} when maxTokens or minTokens is negative or not a number.
 */
export function truncateText(text: string, options: TruncateTextOptions): string {
	const { maxTokens, countTokens, minTokens = 1 } = options;
	if (!(maxTokens >= 0)) throw new RangeError(`truncateText: maxTokens must be at least 0, got ${maxTokens}`);
	if (!(minTokens >= 0)) throw new RangeError(`truncateText: minTokens must be at least 0, got ${minTokens}`);
	const start = trimStart(text, 0, text.length);
	const end = trimEnd(text, start, text.length);
	if (start === end || maxTokens < minTokens || maxTokens < 1) return '';
	const ctx: Context = { text, countTokens, charsPerToken: 1 };

	// Tokenizing is synchronous, so a huge text is first cut by characters to a window that is
	// surely over budget; only a tokenizer packing unusually many characters widens it.
	let limit = Math.max(WINDOW_MIN_CHARS, Math.ceil(maxTokens * WINDOW_CHARS_PER_TOKEN));
	let windowEnd = end;
	let tokens = 0;
	for (let round = 1; ; round++) {
		windowEnd = end - start <= limit ? end : surrogateSafe(text, start + limit);
		tokens = count(ctx, trimmed(text, start, windowEnd));
		if (tokens > maxTokens || windowEnd === end || round === WINDOW_ROUNDS) break;
		limit *= 4;
	}
	if (windowEnd === end && tokens <= maxTokens) return tokens >= minTokens ? text.slice(start, end) : '';

	const goal = MIN_FILL * maxTokens;
	let best: Fit = { index: -1, tokens: 0 };
	let bestEnd = start;
	for (let level = PARAGRAPH; level <= GRAPHEME; level++) {
		const cuts = boundaries(text, level, start, windowEnd);
		if (windowEnd === end) cuts.push(end);
		if (cuts.length === 0) continue;
		if (level < GRAPHEME) {
			// Skip without counting a level whose last boundary before the estimated budget end
			// cannot reach the goal; the next level will do better.
			const within = largestWithin(cuts.length, (k) => cuts[k]! - start, maxTokens * ctx.charsPerToken);
			if (within < 0 || (cuts[within]! - start) / ctx.charsPerToken < goal) continue;
		}
		const fit = fitEnd(ctx, start, cuts, 0, maxTokens);
		if (fit.index >= 0 && fit.tokens > best.tokens) {
			best = fit;
			bestEnd = cuts[fit.index]!;
		}
		if (best.tokens >= goal) break;
	}
	if (best.index < 0 || best.tokens < minTokens) return '';
	return trimmed(text, start, bestEnd);
}
