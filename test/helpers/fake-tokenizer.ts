import type { CountTokens } from '../../integration/split-text.ts';

const piece = /[A-Za-z0-9]+|[^\sA-Za-z0-9]/gu;

/**
 * A stand-in with a real tokenizer's shape, for unit tests of pure logic: an ASCII word is about 1.3 tokens,
 * a CJK character or symbol one, and rounding makes the counts of parts not add up to the count of the whole.
 */
export const fakeCountTokens: CountTokens = (text) => {
	let words = 0;
	let others = 0;
	for (const [match] of text.matchAll(piece)) {
		if (/^[A-Za-z0-9]/.test(match)) words++;
		else others++;
	}
	return Math.ceil(words * 1.3) + others;
};
