/** A language the concierge answers in. */
export type Language = 'ja' | 'en';

const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const LETTER = /\p{L}/gu;
const HAN = /^\p{Script=Han}$/u;
// Kanji-only text ("東京 天気") has no kana, yet a few kanji in English prose ("the kanji 日")
// should not switch the language.
const MIN_HAN_SHARE = 0.2;

/**
 * Guesses whether a visitor wrote in Japanese or English: Japanese when the text has any kana or
 * when CJK ideographs make up at least a fifth of its letters; English otherwise, including for
 * text without letters.
 */
export function detectLanguage(text: string): Language {
	if (KANA.test(text)) return 'ja';
	let letters = 0;
	let han = 0;
	for (const [letter] of text.matchAll(LETTER)) {
		letters++;
		if (HAN.test(letter)) han++;
	}
	return letters > 0 && han / letters >= MIN_HAN_SHARE ? 'ja' : 'en';
}
