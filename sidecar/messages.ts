import type { Language } from './detect-language.ts';

const NO_CONTEXT: Readonly<Record<Language, string>> = {
	ja: '該当する記事が見つかりませんでした。',
	en: 'No article matching your question was found.',
};

const TRUNCATED: Readonly<Record<Language, string>> = {
	ja: '（※ 回答が長くなったため省略されました）',
	en: '(The answer was cut short because it grew too long.)',
};

/** What the sidecar answers, in the question's language, when no article matches the question. */
export function noContextMessage(lang: Language): string {
	return NO_CONTEXT[lang];
}

/** What the sidecar appends, in the question's language, to an answer that hit its token limit. */
export function truncatedNotice(lang: Language): string {
	return TRUNCATED[lang];
}
