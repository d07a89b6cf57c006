const OPEN = '<think>';
const CLOSE = '</think>';

/** Options of {@link createThinkFilter}. */
export interface ThinkFilterOptions {
	/**
	 * The chat template already opened `<think>` in the prompt, so the stream begins inside a
	 * thought and only `</think>` arrives. @default false
	 */
	startsInside?: boolean;
}

/** A streaming filter made by {@link createThinkFilter}; one per generated answer. */
export interface ThinkFilter {
	/** Takes the next chunk of generated text and gives the visible text it releases, possibly ''. */
	push(chunk: string): string;
	/** Ends the stream: gives held-back text that turned out not to be a tag; an unterminated thought is dropped. */
	end(): string;
}

/**
 * Removes `<think>…</think>` sections from a model's streamed text, whatever the chunks' split,
 * so a reasoning model's thoughts never reach the visitor.
 *
 * - Text that could still become a tag (`<`, `<th`, `</thi`…) is held back until the next chunk
 *   decides it; at end() it is released as text. `<thinking>` or `<th>` pass through.
 * - The answer never starts with whitespace: what a model writes between `</think>` and its first
 *   word (usually blank lines) is dropped.
 * - A `</think>` with no open thought is always dropped. When nothing visible has been emitted
 *   yet, the text before it in the same buffered stretch is dropped too, as the thought of a
 *   template that opened `<think>` without `startsInside` being set; text already emitted in
 *   earlier pushes cannot be recalled and stays. Only for such a misconfigured stream does the
 *   output depend on how the text was split into chunks.
 */
export function createThinkFilter(options: ThinkFilterOptions = {}): ThinkFilter {
	let inside = options.startsInside ?? false;
	let pending = '';
	let answerStarted = false;

	function show(text: string): string {
		if (answerStarted) return text;
		const rest = text.trimStart();
		if (rest !== '') answerStarted = true;
		return rest;
	}

	function drain(): string {
		let out = '';
		for (;;) {
			if (inside) {
				const close = pending.indexOf(CLOSE);
				if (close < 0) {
					// Thought is dropped as it comes, except what may be the start of its closing tag.
					pending = pending.slice(pending.length - tagPrefixLength(pending, [CLOSE]));
					return out;
				}
				pending = pending.slice(close + CLOSE.length);
				inside = false;
				continue;
			}
			const open = pending.indexOf(OPEN);
			const close = pending.indexOf(CLOSE);
			if (open < 0 && close < 0) {
				const keep = pending.length - tagPrefixLength(pending, [OPEN, CLOSE]);
				out += show(pending.slice(0, keep));
				pending = pending.slice(keep);
				return out;
			}
			if (open >= 0 && (close < 0 || open < close)) {
				out += show(pending.slice(0, open));
				pending = pending.slice(open + OPEN.length);
				inside = true;
				continue;
			}
			if (answerStarted) out += pending.slice(0, close);
			pending = pending.slice(close + CLOSE.length);
		}
	}

	return {
		push(chunk) {
			pending += chunk;
			return drain();
		},
		end() {
			const rest = inside ? '' : show(pending);
			pending = '';
			return rest;
		},
	};
}

/** Length of the longest end of text that is a proper beginning of one of the tags. */
function tagPrefixLength(text: string, tags: readonly string[]): number {
	const longest = Math.max(...tags.map((tag) => tag.length)) - 1;
	for (let length = Math.min(longest, text.length); length > 0; length--) {
		const end = text.slice(text.length - length);
		if (tags.some((tag) => tag.length > length && tag.startsWith(end))) return length;
	}
	return 0;
}
