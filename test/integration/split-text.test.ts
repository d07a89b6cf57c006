import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { splitText, truncateText, type CountTokens } from '../../integration/split-text.ts';
import { fakeCountTokens } from '../helpers/fake-tokenizer.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const realisticTokens: CountTokens = fakeCountTokens;
const codePoints: CountTokens = (text) => [...text].length;
const nonSpaceChars: CountTokens = (text) => text.replace(/\s/g, '').length;
const threeCharsPerToken: CountTokens = (text) => Math.ceil(text.length / 3);

interface Counted {
	countTokens: CountTokens;
	calls: number;
	chars: number;
}

function counted(countTokens: CountTokens): Counted {
	const counter: Counted = {
		calls: 0,
		chars: 0,
		countTokens: (text) => {
			counter.calls++;
			counter.chars += text.length;
			return countTokens(text);
		},
	};
	return counter;
}

function pick<T>(next: () => number, items: readonly T[]): T {
	return items[Math.floor(next() * items.length)]!;
}

const WORDS = (
	'the a static site builds every page ahead of time so readers get plain html and the search ' +
	'index ships with it while embeddings map each chunk of an article to a vector that the browser ' +
	'compares against the question using cosine similarity without any server at all quickly'
).split(' ');

function englishSentence(next: () => number): string {
	const words = Array.from({ length: 6 + Math.floor(next() * 14) }, () => pick(next, WORDS));
	if (words.length > 10) words[4] += ',';
	const sentence = words.join(' ');
	return sentence[0]!.toUpperCase() + sentence.slice(1) + pick(next, ['.', '.', '.', '!', '?']);
}

/** Paragraphs from `paragraph`, separated by blank lines, until the text is at least `chars` long. */
function textOf(chars: number, seed: number, paragraph: (next: () => number) => string): string {
	const next = seededRandom(seed);
	const paragraphs: string[] = [];
	let length = 0;
	while (length < chars) {
		const text = paragraph(next);
		paragraphs.push(text);
		length += text.length + 2;
	}
	return paragraphs.join('\n\n');
}

function englishText(chars: number, seed = 1): string {
	return textOf(chars, seed, (next) => {
		const sentences = Array.from({ length: 2 + Math.floor(next() * 6) }, () => englishSentence(next));
		return next() < 0.1 ? `## ${sentences[0]}` : sentences.join(' ');
	});
}

const CLAUSES = [
	'静的サイトはすべてのページを前もって生成する',
	'読者はただのHTMLを受け取る',
	'検索用の索引も一緒に配布される',
	'記事はいくつかの断片に分けられる',
	'それぞれの断片はベクトルに変換される',
	'ブラウザは質問を同じモデルで埋め込む',
	'似ている断片から順に並べる',
	'サーバーは一台も要らない',
	'日本語の文は句点で終わる',
	'読点は文の途中で息をつく場所になる',
	'小さな言語モデルが答えを組み立てる',
	'文脈は予算の中に収めなければならない',
];

function japaneseSentence(next: () => number): string {
	const clauses = Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(next, CLAUSES));
	return clauses.join('、') + pick(next, ['。', '。', '。', '！', '？']);
}

function japaneseText(chars: number, seed = 2): string {
	return textOf(chars, seed, (next) => Array.from({ length: 2 + Math.floor(next() * 5) }, () => japaneseSentence(next)).join(''));
}

function mixedText(chars: number, seed = 3): string {
	return textOf(chars, seed, (next) =>
		next() < 0.5
			? `Astro の build では、${japaneseSentence(next)}${englishSentence(next)} ${japaneseSentence(next)}`
			: `${englishSentence(next)} ${japaneseSentence(next)}`,
	);
}

const CODE = [
	'Here is how the integration is registered:',
	'',
	'```ts',
	"import { defineConfig } from 'astro/config';",
	"import concierge from 'astro-concierge';",
	'',
	'export default defineConfig({',
	"\tsite: 'https://example.com',",
	'\tintegrations: [',
	'\t\tconcierge({',
	"\t\t\tmodel: 'Xenova/multilingual-e5-small',",
	"\t\t\tdtype: 'q8',",
	'\t\t}),',
	'\t],',
	'});',
	'',
	'function cosine(a: Float32Array, b: Float32Array): number {',
	'\tlet dot = 0;',
	'\tfor (let i = 0; i < a.length; i++) dot += a[i] * b[i];',
	'\treturn dot;',
	'}',
	'```',
	'',
	'The build then writes kb.json next to the pages.',
].join('\n');

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const graphemes = (text: string): string[] => Array.from(segmenter.segment(text), ({ segment }) => segment);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Where each chunk starts in text, asserting that chunks without overlap are the text in order. */
function locate(text: string, chunks: string[]): number[] {
	const starts: number[] = [];
	let cursor = 0;
	for (const chunk of chunks) {
		assert.notEqual(chunk.trim(), '', 'a chunk is empty or whitespace-only');
		const start = text.indexOf(chunk, cursor);
		assert.ok(start >= 0, `chunk not found in order: ${JSON.stringify(chunk.slice(0, 40))}`);
		assert.match(text.slice(cursor, start), /^\s*$/, 'text between chunks was lost');
		starts.push(start);
		cursor = start + chunk.length;
	}
	assert.match(text.slice(cursor), /^\s*$/, 'text after the last chunk was lost');
	return starts;
}

function assertWithin(chunks: string[], maxTokens: number, countTokens: CountTokens): void {
	for (const chunk of chunks) {
		const tokens = countTokens(chunk);
		assert.ok(tokens <= maxTokens, `${tokens} tokens > ${maxTokens}: ${JSON.stringify(chunk.slice(0, 60))}`);
	}
}

function assertGraphemeSafe(text: string, chunks: string[]): void {
	const cuts = new Set<number>([text.length]);
	for (const { index } of segmenter.segment(text)) cuts.add(index);
	const starts = locate(text, chunks);
	chunks.forEach((chunk, i) => {
		assert.doesNotMatch(chunk, LONE_SURROGATE);
		assert.ok(cuts.has(starts[i]!) && cuts.has(starts[i]! + chunk.length), `chunk ${i} cuts a grapheme`);
	});
}

describe('splitText', () => {
	test('returns a text that fits as one trimmed chunk', () => {
		assert.deepEqual(splitText('\n  Hello there, world.  \n', { maxTokens: 50, countTokens: realisticTokens }), [
			'Hello there, world.',
		]);
	});

	test('returns no chunks for an empty or whitespace-only text', () => {
		assert.deepEqual(splitText('', { maxTokens: 10, countTokens: realisticTokens }), []);
		assert.deepEqual(splitText(' \n\n\t　', { maxTokens: 10, countTokens: realisticTokens }), []);
	});

	test('keeps every chunk within maxTokens in English, Japanese, mixed text and code, losing no text', () => {
		const texts = {
			english: englishText(6000),
			japanese: japaneseText(3000),
			mixed: mixedText(5000),
			code: `${CODE}\n\n${CODE}\n\n${englishText(800)}`,
		};
		for (const [name, text] of Object.entries(texts)) {
			for (const maxTokens of [4, 16, 64, 256]) {
				const chunks = splitText(text, { maxTokens, countTokens: realisticTokens });
				assert.ok(chunks.length > 1, `${name} at ${maxTokens} was not split`);
				assertWithin(chunks, maxTokens, realisticTokens);
				assertGraphemeSafe(text, chunks);
			}
		}
	});

	test('reproduces the text when the chunks are concatenated without overlap, apart from edge whitespace', () => {
		const text = `  ${mixedText(4000)}\n\n${CODE}\n`;
		const chunks = splitText(text, { maxTokens: 40, countTokens: realisticTokens });
		const starts = locate(text, chunks);
		let rebuilt = '';
		chunks.forEach((chunk, i) => {
			// Put back exactly the whitespace that was trimmed between chunks.
			const gapStart = i === 0 ? 0 : starts[i - 1]! + chunks[i - 1]!.length;
			rebuilt += text.slice(gapStart, starts[i]) + chunk;
		});
		rebuilt += text.slice(starts.at(-1)! + chunks.at(-1)!.length);
		assert.equal(rebuilt, text);
		assert.equal(chunks.join('').replace(/\s/g, ''), text.replace(/\s/g, ''));
	});

	test('splits at the blank line between paragraphs rather than mid-sentence', () => {
		const first = 'The first paragraph talks about builds. It has two sentences.';
		const second = 'The second paragraph is about search. It also has two sentences.';
		const countTokens = realisticTokens;
		const maxTokens = Math.max(countTokens(first), countTokens(second)) + 2;
		assert.ok(countTokens(`${first}\n\n${second}`) > maxTokens);
		assert.deepEqual(splitText(`${first}\n\n${second}`, { maxTokens, countTokens }), [first, second]);
	});

	test('prefers line breaks to sentence ends, sentence ends to clause marks, and spaces to graphemes', () => {
		const countTokens = realisticTokens;
		const lines = 'One line. With two sentences\nanother line. Also two sentences';
		assert.deepEqual(splitText(lines, { maxTokens: 8, countTokens }), [
			'One line. With two sentences',
			'another line. Also two sentences',
		]);
		const sentences = 'First, a clause. Second, another clause.';
		assert.deepEqual(splitText(sentences, { maxTokens: 7, countTokens }), [
			'First, a clause.',
			'Second, another clause.',
		]);
		const clauses = 'When the build runs, every article is read, split and embedded.';
		assert.deepEqual(splitText(clauses, { maxTokens: 10, countTokens }), [
			'When the build runs,',
			'every article is read,',
			'split and embedded.',
		]);
		const words = splitText('embedding vectors everywhere', { maxTokens: 2, countTokens });
		assert.deepEqual(words, ['embedding', 'vectors', 'everywhere']);
	});

	test('splits a Japanese paragraph at 。 before 、, and at 、 before single characters', () => {
		const paragraph = '記事は断片に分けられ、それぞれベクトルになる。ブラウザは質問を埋め込み、似た断片を探す。答えは小さなモデルが書く。';
		const countTokens = nonSpaceChars;
		const bySentence = splitText(paragraph, { maxTokens: 24, countTokens });
		assert.deepEqual(bySentence, [
			'記事は断片に分けられ、それぞれベクトルになる。',
			'ブラウザは質問を埋め込み、似た断片を探す。',
			'答えは小さなモデルが書く。',
		]);
		const byClause = splitText(paragraph, { maxTokens: 13, countTokens });
		assert.deepEqual(byClause, [
			'記事は断片に分けられ、',
			'それぞれベクトルになる。',
			'ブラウザは質問を埋め込み、',
			'似た断片を探す。',
			'答えは小さなモデルが書く。',
		]);
		const byCharacter = splitText(paragraph, { maxTokens: 8, countTokens });
		assertWithin(byCharacter, 8, countTokens);
		assert.equal(byCharacter.join(''), paragraph);
		// A clause that fits is still kept whole; only longer ones are cut between characters.
		assert.ok(byCharacter.includes('似た断片を探す。'));
		assert.ok(byCharacter.some((chunk) => !/[、。]$/.test(chunk)));
	});

	test('keeps a sentence mark with its sentence and never splits at a decimal point, a domain or 1,000', () => {
		const text = 'Pi is 3.14159 on example.com, roughly. It costs 1,000 yen? Yes! Really.';
		for (const maxTokens of [9, 12, 20]) {
			const chunks = splitText(text, { maxTokens, countTokens: realisticTokens });
			for (const whole of ['3.14159', 'example.com', '1,000']) assert.ok(chunks.some((chunk) => chunk.includes(whole)), whole);
			for (const chunk of chunks) assert.doesNotMatch(chunk, /^[.,!?]/, 'a mark left its sentence');
		}
		assert.deepEqual(splitText(text, { maxTokens: 20, countTokens: realisticTokens }), [
			'Pi is 3.14159 on example.com, roughly.',
			'It costs 1,000 yen? Yes! Really.',
		]);
	});

	test('falls back to grapheme clusters for a 5,000-character URL and a base64 run', () => {
		const next = seededRandom(7);
		const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
		const base64 = Array.from({ length: 5000 }, () => pick(next, [...alphabet])).join('');
		const url = `https://example.com/${Array.from({ length: 700 }, () => pick(next, ['a', 'b', 'c', 'd'])).join('')}`
			.padEnd(5000, '/x?y=1&z.w');
		for (const [text, countTokens] of [
			[base64, threeCharsPerToken],
			[url, realisticTokens],
			[`See ${url} and ${base64} for the data.`, realisticTokens],
		] as const) {
			for (const maxTokens of [7, 100, 1000]) {
				const chunks = splitText(text, { maxTokens, countTokens });
				assert.ok(chunks.length > 1);
				assertWithin(chunks, maxTokens, countTokens);
				assertGraphemeSafe(text, chunks);
			}
		}
		const chunks = splitText(base64, { maxTokens: 100, countTokens: threeCharsPerToken });
		assert.equal(chunks[0]!.length, 300, 'grapheme-level chunks are filled, not left short');
	});

	test('never splits a surrogate pair, an emoji ZWJ sequence, a combining mark or a variation selector', () => {
		const pieces = ['😀', '👨‍👩‍👧‍👦', 'e\u0301', 'ka\u3099', '❤️', '🇯🇵', '👍🏽', '𠮷', 'x'];
		const next = seededRandom(11);
		const text = Array.from({ length: 600 }, () => pick(next, pieces)).join('');
		for (const maxTokens of [7, 8, 13, 50]) {
			const chunks = splitText(text, { maxTokens, countTokens: codePoints });
			assert.ok(chunks.length > 1);
			assertWithin(chunks, maxTokens, codePoints);
			assertGraphemeSafe(text, chunks);
			assert.deepEqual(graphemes(chunks.join('')), graphemes(text));
		}
		// A grapheme larger than the budget is kept whole, alone, rather than corrupted.
		const chunks = splitText(text, { maxTokens: 3, countTokens: codePoints });
		assertGraphemeSafe(text, chunks);
		for (const chunk of chunks.filter((chunk) => codePoints(chunk) > 3)) assert.equal(graphemes(chunk).length, 1);
		assert.deepEqual(graphemes(chunks.join('')), graphemes(text));
	});

	test('does not trim the space that carries a combining mark', () => {
		const text = 'word \u0301word \u0301word \u0301word';
		const chunks = splitText(text, { maxTokens: 2, countTokens: codePoints });
		assertGraphemeSafe(text, chunks);
	});

	test('starts each chunk after the first with the tail of the previous one, still within maxTokens', () => {
		for (const [text, countTokens, inWholeWords] of [
			[englishText(8000, 5), realisticTokens, true],
			// Japanese has no spaces, so a tail finer than a clause is cut between characters.
			[japaneseText(4000, 6), nonSpaceChars, false],
		] as const) {
			for (const [maxTokens, overlapTokens] of [
				[64, 16],
				[200, 40],
				[12, 11],
			] as const) {
				const chunks = splitText(text, { maxTokens, overlapTokens, countTokens });
				assertWithin(chunks, maxTokens, countTokens);
				let previousStart = text.indexOf(chunks[0]!);
				let overlapping = 0;
				for (let i = 1; i < chunks.length; i++) {
					const previous = chunks[i - 1]!;
					const previousEnd = previousStart + previous.length;
					const start = text.indexOf(chunks[i]!, previousStart + 1);
					assert.ok(start > previousStart, 'each chunk moves forward');
					if (start < previousEnd) {
						overlapping++;
						const tail = text.slice(start, previousEnd);
						assert.ok(previous.endsWith(tail) && chunks[i]!.startsWith(tail));
						assert.ok(countTokens(tail) <= overlapTokens, `tail of ${countTokens(tail)} tokens`);
						if (inWholeWords) assert.match(text[start - 1]!, /[\s.,!?]/, 'a tail starts inside a word');
					} else {
						assert.match(text.slice(previousEnd, start), /^\s*$/);
					}
					previousStart = start;
				}
				assert.ok(overlapping >= (chunks.length - 1) * 0.9, `${overlapping} of ${chunks.length - 1} overlap`);
			}
		}
	});

	test('takes the overlap in whole sentences when the chunks were cut at sentence ends', () => {
		const text = 'One two three. Four five six. Seven eight nine. Ten eleven twelve. Thirteen fourteen.';
		const chunks = splitText(text, { maxTokens: 12, overlapTokens: 5, countTokens: realisticTokens });
		assert.deepEqual(chunks, [
			'One two three. Four five six.',
			'Four five six. Seven eight nine.',
			'Seven eight nine. Ten eleven twelve.',
			'Ten eleven twelve. Thirteen fourteen.',
		]);
	});

	test('counts tokens a modest number of times on a 200 KB text', (t) => {
		for (const [name, text, countTokens] of [
			['English', englishText(200_000, 21), realisticTokens],
			['Japanese', japaneseText(200_000, 22), realisticTokens],
			['mixed', mixedText(200_000, 23), realisticTokens],
		] as const) {
			for (const [maxTokens, overlapTokens] of [
				[512, 0],
				[128, 0],
				[128, 32],
				[16, 0],
			] as const) {
				const counter = counted(countTokens);
				const chunks = splitText(text, { maxTokens, overlapTokens, countTokens: counter.countTokens });
				assertWithin(chunks, maxTokens, countTokens);
				const perChunk = counter.calls / chunks.length;
				const charsPerChar = counter.chars / text.length;
				t.diagnostic(
					`${name} ${text.length} chars, maxTokens ${maxTokens}, overlap ${overlapTokens}: ${chunks.length} chunks, ` +
						`${counter.calls} countTokens calls (${perChunk.toFixed(2)} per chunk), ${charsPerChar.toFixed(2)}× the text tokenized`,
				);
				assert.ok(counter.calls < 20 * chunks.length, `${counter.calls} calls for ${chunks.length} chunks`);
				assert.ok(counter.chars < 12 * text.length, `${counter.chars} characters tokenized`);
			}
		}
	});

	test('refuses maxTokens below 1 and overlapTokens not below maxTokens, naming the option', () => {
		const countTokens = realisticTokens;
		assert.throws(() => splitText('text', { maxTokens: 0, countTokens }), { name: 'RangeError', message: /maxTokens/ });
		assert.throws(() => splitText('text', { maxTokens: Number.NaN, countTokens }), { name: 'RangeError', message: /maxTokens/ });
		assert.throws(() => splitText('text', { maxTokens: 10, overlapTokens: 10, countTokens }), {
			name: 'RangeError',
			message: /overlapTokens/,
		});
		assert.throws(() => splitText('text', { maxTokens: 10, overlapTokens: -1, countTokens }), {
			name: 'RangeError',
			message: /overlapTokens/,
		});
	});
});

describe('truncateText', () => {
	test('returns a text that fits whole, trimmed', () => {
		assert.equal(truncateText('  Short text.\n', { maxTokens: 10, countTokens: realisticTokens }), 'Short text.');
		assert.equal(truncateText(' \n ', { maxTokens: 10, countTokens: realisticTokens }), '');
	});

	for (const [language, text, sentenceEnd, clauseEnd] of [
		['Japanese', japaneseText(1_000_000, 31), /[。！？]$/, /[。！？、]$/],
		['English', englishText(1_000_000, 32), /[.!?]$/, /[.!?,]$/],
	] as const) {
		test(`cuts 1 MB of ${language} to at most the budget and at least 90% of it, at a natural boundary`, (t) => {
			for (const maxTokens of [50, 300, 2000, 8000]) {
				const counter = counted(realisticTokens);
				const result = truncateText(text, { maxTokens, countTokens: counter.countTokens });
				const tokens = realisticTokens(result);
				t.diagnostic(
					`${language}, maxTokens ${maxTokens}: ${tokens} tokens (${((100 * tokens) / maxTokens).toFixed(1)}%), ` +
						`${counter.calls} countTokens calls over ${counter.chars} characters`,
				);
				assert.ok(text.startsWith(result));
				assert.ok(tokens <= maxTokens, `${tokens} > ${maxTokens}`);
				assert.ok(tokens >= 0.9 * maxTokens, `${tokens} < 90% of ${maxTokens}`);
				// A sentence end while sentences are small against the budget, a clause mark otherwise.
				if (maxTokens >= 2000) assert.match(result, sentenceEnd);
				else if (maxTokens >= 300) assert.match(result, clauseEnd);
				assert.ok(counter.calls <= 30, `${counter.calls} calls`);
				assert.ok(counter.chars <= 40 * maxTokens * 8, `${counter.chars} characters tokenized`);
			}
		});
	}

	test('keeps whole paragraphs while they fill at least 90% of the budget', () => {
		const paragraph = '記事は断片に分けられ、それぞれベクトルになる。似た断片を探す。';
		const text = Array.from({ length: 40 }, () => paragraph).join('\n\n');
		const result = truncateText(text, { maxTokens: 10 * paragraph.length + 5, countTokens: nonSpaceChars });
		assert.equal(result, Array.from({ length: 10 }, () => paragraph).join('\n\n'));
	});

	test('handles a text with no natural boundary at all', () => {
		const kanji = '断片分割埋込検索回答文脈予算'.repeat(80_000);
		const next = seededRandom(41);
		const base64 = Array.from({ length: 1_000_000 }, () => pick(next, [...'ABCDEFabcdef0123456789+/'])).join('');
		const emoji = ['👨‍👩‍👧‍👦', '🇯🇵', 'e\u0301', '😀'].join('').repeat(50_000);
		for (const [text, countTokens] of [
			[kanji, realisticTokens],
			[base64, threeCharsPerToken],
			[emoji, codePoints],
		] as const) {
			for (const maxTokens of [20, 1000]) {
				const result = truncateText(text, { maxTokens, countTokens });
				const tokens = countTokens(result);
				assert.ok(text.startsWith(result));
				assert.ok(tokens <= maxTokens && tokens >= 0.9 * maxTokens, `${tokens} of ${maxTokens}`);
				assert.doesNotMatch(result, LONE_SURROGATE);
				const kept = graphemes(result).length;
				assert.equal(graphemes(text.slice(0, result.length + 40)).slice(0, kept).join(''), result, 'cut inside a grapheme');
			}
		}
	});

	test('returns an empty string when fewer than minTokens fit', () => {
		assert.equal(truncateText('Two words', { maxTokens: 10, minTokens: 4, countTokens: realisticTokens }), '');
		assert.equal(truncateText('👨‍👩‍👧‍👦👨‍👩‍👧‍👦', { maxTokens: 5, countTokens: codePoints }), '');
		assert.equal(truncateText(englishText(5000), { maxTokens: 0, countTokens: realisticTokens }), '');
		assert.equal(truncateText(englishText(5000), { maxTokens: 20, minTokens: 30, countTokens: realisticTokens }), '');
		assert.notEqual(truncateText(englishText(5000), { maxTokens: 20, minTokens: 15, countTokens: realisticTokens }), '');
	});

	test('refuses a negative maxTokens or minTokens, naming the option', () => {
		const countTokens = realisticTokens;
		assert.throws(() => truncateText('text', { maxTokens: -1, countTokens }), { name: 'RangeError', message: /maxTokens/ });
		assert.throws(() => truncateText('text', { maxTokens: Number.NaN, countTokens }), { name: 'RangeError', message: /maxTokens/ });
		assert.throws(() => truncateText('text', { maxTokens: 10, minTokens: -1, countTokens }), {
			name: 'RangeError',
			message: /minTokens/,
		});
	});
});
