import { ArticleError } from './article-error.ts';

/** Largest article accepted, in bytes of UTF-8: anything bigger is almost surely not prose meant for a reader. */
export const maxArticleBytes = 1_048_576;

const newline = 0x0a;

/**
 * Turns an article's bytes (or string) into text without a BOM, refusing articles over
 * {@link maxArticleBytes} and bytes that are not UTF-8.
 */
export function decodeArticle(source: Uint8Array | string, file: string): string {
	const size = typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.byteLength;
	if (size > maxArticleBytes) {
		throw new ArticleError(file, undefined, `article is ${size} bytes, over the limit of ${maxArticleBytes} bytes (1 MB)`);
	}
	if (typeof source === 'string') return source.replace(/^\uFEFF/, '');
	try {
		// The default `ignoreBOM: false` already drops a leading BOM.
		return new TextDecoder('utf-8', { fatal: true }).decode(source);
	} catch (error) {
		throw new ArticleError(file, firstInvalidLine(source), 'not valid UTF-8', { cause: error });
	}
}

/**
 * The decoder does not say where it failed; since a newline byte never occurs inside a valid
 * multi-byte sequence, decoding line by line finds the line without changing the verdict.
 */
function firstInvalidLine(bytes: Uint8Array): number | undefined {
	const decoder = new TextDecoder('utf-8', { fatal: true });
	let line = 1;
	let start = 0;
	while (start <= bytes.length) {
		let end = bytes.indexOf(newline, start);
		if (end === -1) end = bytes.length;
		try {
			decoder.decode(bytes.subarray(start, end));
		} catch {
			return line;
		}
		line++;
		start = end + 1;
	}
	return undefined;
}
