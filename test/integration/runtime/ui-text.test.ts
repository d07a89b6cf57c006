import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ISLAND_LANGUAGES } from '../../../integration/runtime/island-config.ts';
import { ERROR_TEXT, UI_TEXT, errorText, formatBytes, formatText, pickLanguage } from '../../../integration/runtime/ui-text.ts';
import { ERROR_CODES } from '../../../sidecar/protocol.ts';

const placeholders = (template: string) => [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

describe('UI_TEXT', () => {
	test('has the same keys in every language, none of them empty', () => {
		const keys = Object.keys(UI_TEXT.en).sort();
		for (const lang of ISLAND_LANGUAGES) {
			assert.deepEqual(Object.keys(UI_TEXT[lang]).sort(), keys, lang);
			for (const [key, value] of Object.entries(UI_TEXT[lang])) assert.notEqual(value.trim(), '', `${lang}.${key}`);
		}
	});

	test('uses the same placeholders in every language', () => {
		for (const [key, english] of Object.entries(UI_TEXT.en)) {
			assert.deepEqual(placeholders(UI_TEXT.ja[key as keyof typeof UI_TEXT.ja]), placeholders(english), key);
		}
	});

	test('names the placeholders the island fills', () => {
		assert.deepEqual(placeholders(UI_TEXT.en.downloadingModel), ['loaded', 'total']);
		assert.deepEqual(placeholders(UI_TEXT.en.queued), ['n', 's']);
		assert.deepEqual(placeholders(UI_TEXT.en.reconnecting), ['s']);
		assert.deepEqual(placeholders(UI_TEXT.en.modelFailed), ['reason']);
	});
});

describe('errorText', () => {
	test('has a text for every protocol error code in every language, none of them a placeholder', () => {
		for (const lang of ISLAND_LANGUAGES) {
			assert.deepEqual(Object.keys(ERROR_TEXT[lang]).sort(), Object.values(ERROR_CODES).sort(), lang);
			for (const code of Object.values(ERROR_CODES)) {
				const text = errorText(lang, code, 'fallback');
				assert.notEqual(text, 'fallback', `${lang} ${code}`);
				assert.notEqual(text.trim(), '', `${lang} ${code}`);
				assert.deepEqual(placeholders(text), []);
			}
		}
	});

	test('speaks the requested language', () => {
		assert.equal(errorText('en', 'BUSY', ''), 'The concierge is busy right now; please try again in a moment.');
		assert.equal(errorText('ja', 'BUSY', ''), '現在混み合っています。しばらくしてからお試しください。');
	});

	test('falls back to the given message for an unknown code, even one named like an object property', () => {
		assert.equal(errorText('en', 'NEW_CODE', 'server said so'), 'server said so');
		assert.equal(errorText('ja', 'toString', 'server said so'), 'server said so');
	});
});

describe('formatText', () => {
	test('fills every placeholder, repeated ones too', () => {
		assert.equal(formatText('{n} of {total}, still {n}', { n: 3, total: '10 MB' }), '3 of 10 MB, still 3');
	});

	test('leaves a placeholder without a value as written', () => {
		assert.equal(formatText('about {s} s ({reason})', { s: 4 }), 'about 4 s ({reason})');
	});

	test('fills the queue text in Japanese', () => {
		assert.equal(formatText(UI_TEXT.ja.queued, { n: 2, s: 30 }), '現在2番目です。あと約30秒お待ちください');
	});
});

describe('formatBytes', () => {
	test('picks the unit and shows one decimal only below ten of it', () => {
		assert.equal(formatBytes(950, 'en'), '950 B');
		assert.equal(formatBytes(2_400, 'en'), '2.4 KB');
		assert.equal(formatBytes(2_000_000, 'en'), '2 MB');
		assert.equal(formatBytes(118_400_000, 'ja'), '118 MB');
		assert.equal(formatBytes(1_500_000_000, 'ja'), '1.5 GB');
	});

	test('groups the digits of the largest unit as the language does', () => {
		assert.equal(formatBytes(2_500_000_000_000, 'en'), '2,500 GB');
	});
});

describe('pickLanguage', () => {
	test('follows a Japanese <html lang> in any of its spellings', () => {
		for (const lang of ['ja', 'ja-JP', 'JA-jp', 'ja_JP', ' ja ']) assert.equal(pickLanguage(lang, null), 'ja', lang);
	});

	test('speaks English for any other or missing <html lang>', () => {
		for (const lang of ['en', 'en-US', 'fr', 'jav', '', null, undefined]) assert.equal(pickLanguage(lang, null), 'en', String(lang));
	});

	test('lets the configured language win over the page', () => {
		assert.equal(pickLanguage('en', 'ja'), 'ja');
		assert.equal(pickLanguage('ja-JP', 'en'), 'en');
	});
});
