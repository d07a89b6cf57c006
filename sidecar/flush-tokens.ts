/** Options of {@link createTokenFlusher}. */
export interface TokenFlusherOptions {
	/** Receives each frame; the frames concatenate to exactly the pushed text. */
	send: (text: string) => void;
	/** A frame goes out once the buffer holds at least this many characters (code points). @default 8 */
	minChars?: number;
	/** A frame also goes out as soon as the buffer ends in one of these characters. @default '。、\n' */
	breakChars?: string;
}

/** Groups generated tokens into frames; made by {@link createTokenFlusher}. */
export interface TokenFlusher {
	/** Adds one token's text, sending the buffer when it has grown long enough or ends at a break. */
	push(token: string): void;
	/** Sends whatever is still buffered. */
	end(): void;
}

/**
 * Batches a model's streamed tokens into frames for the visitor's socket: a frame per token
 * costs more in overhead than it gains, yet a Japanese clause should appear as soon as it closes,
 * since Japanese has no spaces to make a short frame worth waiting for.
 */
export function createTokenFlusher(options: TokenFlusherOptions): TokenFlusher {
	const { send, minChars = 8, breakChars = '。、\n' } = options;
	if (!Number.isInteger(minChars) || minChars < 1) {
		throw new RangeError(`createTokenFlusher: minChars must be a positive integer, got ${minChars}`);
	}
	const breaks = new Set(breakChars);
	let buffer = '';

	return {
		push(token) {
			if (token === '') return;
			buffer += token;
			// Half a surrogate pair would reach the browser as U+FFFD, so the frame waits for the other half.
			if (endsInHighSurrogate(buffer)) return;
			if (codePoints(buffer) >= minChars || breaks.has(lastCodePoint(buffer))) {
				send(buffer);
				buffer = '';
			}
		},
		end() {
			if (buffer === '') return;
			send(buffer);
			buffer = '';
		},
	};
}

function codePoints(text: string): number {
	let count = 0;
	for (const _ of text) count++;
	return count;
}

function endsInHighSurrogate(text: string): boolean {
	const code = text.charCodeAt(text.length - 1);
	return code >= 0xd800 && code <= 0xdbff;
}

function lastCodePoint(text: string): string {
	const code = text.charCodeAt(text.length - 1);
	if (code >= 0xdc00 && code <= 0xdfff && text.length > 1) {
		const before = text.charCodeAt(text.length - 2);
		if (before >= 0xd800 && before <= 0xdbff) return text.slice(-2);
	}
	return text.slice(-1);
}
