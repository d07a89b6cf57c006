import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectLanguage } from '../../sidecar/detect-language.ts';

describe('detectLanguage', () => {
	test('finds Japanese in text with hiragana or katakana', () => {
		assert.equal(detectLanguage('Astroの使い方を教えて'), 'ja');
		assert.equal(detectLanguage('What is a コンポーネント in Astro and how do I write one?'), 'ja');
		assert.equal(detectLanguage('ｱｽﾄﾛ'), 'ja');
	});

	test('finds Japanese in kanji-only text', () => {
		assert.equal(detectLanguage('東京 天気'), 'ja');
		assert.equal(detectLanguage('Astro 設定方法'), 'ja');
	});

	test('keeps English when only a few kanji appear among many letters', () => {
		assert.equal(detectLanguage('What does the kanji 日 mean in this article about calendars?'), 'en');
	});

	test('takes English for plain English and for text without letters', () => {
		assert.equal(detectLanguage('How do I deploy an Astro site?'), 'en');
		assert.equal(detectLanguage(''), 'en');
		assert.equal(detectLanguage('1234 !?'), 'en');
	});
});
