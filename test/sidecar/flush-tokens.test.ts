import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTokenFlusher, type TokenFlusherOptions } from '../../sidecar/flush-tokens.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

function frames(tokens: readonly string[], options: Omit<TokenFlusherOptions, 'send'> = {}): string[] {
	const sent: string[] = [];
	const flusher = createTokenFlusher({ ...options, send: (text) => sent.push(text) });
	for (const token of tokens) flusher.push(token);
	flusher.end();
	return sent;
}

describe('createTokenFlusher', () => {
	test('sends English at the token that brings the buffer to eight characters', () => {
		assert.deepEqual(frames(['The', ' answer', ' is', ' in', ' the', ' second', ' article', '.']), [
			'The answer',
			' is in the',
			// ' second' is only seven characters.
			' second article',
			'.',
		]);
	});

	test('sends Japanese at 。 and 、 even when the buffer is short', () => {
		assert.deepEqual(frames(['はい', '、', 'そう', 'です', '。', '記事', 'を', 'ご覧', 'ください']), [
			'はい、',
			'そうです。',
			'記事をご覧ください',
		]);
	});

	test('sends at a newline', () => {
		assert.deepEqual(frames(['- a', '\n', '- b', '\n\n', 'ok']), ['- a\n', '- b\n\n', 'ok']);
	});

	test('sends once for a token that both crosses eight characters and ends in 。', () => {
		assert.deepEqual(frames(['東京の', '天気は晴れです。', '明日']), ['東京の天気は晴れです。', '明日']);
	});

	test('does not send for a break character in the middle of a token', () => {
		assert.deepEqual(frames(['a。b', 'c']), ['a。bc']);
	});

	test('counts an emoji made of a surrogate pair as one character', () => {
		// Seven emoji are fourteen UTF-16 units but only seven characters.
		assert.deepEqual(frames(['😀😀😀', '😀😀😀', '😀', '😀', 'x']), ['😀😀😀😀😀😀😀😀', 'x']);
	});

	test('holds half a surrogate pair until its other half arrives', () => {
		assert.deepEqual(frames(['abcdefg\ud83d', '\ude00', 'h']), ['abcdefg😀', 'h']);
	});

	test('ignores empty pushes and sends nothing at the end of an empty stream', () => {
		assert.deepEqual(frames(['', '', '']), []);
		assert.deepEqual(frames(['abc', '', 'def', '']), ['abcdef']);
	});

	test('honours minChars and breakChars', () => {
		assert.deepEqual(frames(['a', 'b', 'c', '.', 'd'], { minChars: 2, breakChars: '.' }), ['ab', 'c.', 'd']);
		assert.throws(() => createTokenFlusher({ send() {}, minChars: 0 }), RangeError);
	});

	test('sends frames that concatenate to exactly the pushed text', () => {
		const random = seededRandom(20240611);
		const alphabet = ['a', ' ', 'ä', '日', '本', '。', '、', '\n', '😀', '👍🏽', 'e\u0301'];
		for (let round = 0; round < 200; round++) {
			const tokens: string[] = [];
			const count = Math.floor(random() * 40);
			for (let index = 0; index < count; index++) {
				let token = '';
				const length = Math.floor(random() * 5);
				for (let char = 0; char < length; char++) token += alphabet[Math.floor(random() * alphabet.length)];
				tokens.push(token);
			}
			const minChars = 1 + Math.floor(random() * 10);
			const sent = frames(tokens, { minChars });
			assert.equal(sent.join(''), tokens.join(''));
			assert.ok(sent.every((frame) => frame !== ''));
			// Every frame but the last closed at a break or once it was long enough.
			for (const frame of sent.slice(0, -1)) {
				assert.ok([...frame].length >= minChars || /[。、\n]$/u.test(frame), JSON.stringify(frame));
			}
		}
	});
});
