// Browser-safe: every string the island shows or announces, in each language it speaks.
// Templates name their values in braces, e.g. `{n}`, filled by formatText.

import type { ErrorCode } from '../../sidecar/protocol.ts';
import type { IslandLanguage } from './island-config.ts';

/** The island's strings in one language. */
export interface UiText {
	/** The floating button. */
	launcher: string;
	dialogTitle: string;
	placeholder: string;
	send: string;
	stop: string;
	close: string;
	clearConversation: string;
	suggestedQuestions: string;
	matchingArticles: string;
	sources: string;
	/** Announced to screen readers while the question is searched. */
	searching: string;
	/** Announced to screen readers while the answer streams. */
	answering: string;
	answerComplete: string;
	answerStopped: string;
	/** `{loaded}` and `{total}` come from formatBytes. */
	downloadingModel: string;
	preparingSearch: string;
	/** `{n}`: place in the sidecar's queue; `{s}`: expected wait in seconds. */
	queued: string;
	/** `{n}`: place in the sidecar's queue, before the server can estimate the wait. */
	queuedPosition: string;
	/** `{s}`: seconds until the next attempt. */
	reconnecting: string;
	reconnected: string;
	answersUnavailable: string;
	searchOnly: string;
	noMatches: string;
	/** The browser cannot embed the question, so the sidecar's `query` action searches instead. */
	serverSearch: string;
	/** `astro dev` without a kb.json from an earlier build. */
	needsBuild: string;
	/** `{reason}`: the error's message. */
	modelFailed: string;
	/** Screen-reader prefixes of the two sides of the conversation. */
	you: string;
	concierge: string;
}

export const UI_TEXT: Record<IslandLanguage, UiText> = {
	en: {
		launcher: 'Ask this blog',
		dialogTitle: 'Questions about this blog',
		placeholder: 'Ask a question about this blog',
		send: 'Send',
		stop: 'Stop',
		close: 'Close',
		clearConversation: 'Clear conversation',
		suggestedQuestions: 'Suggested questions',
		matchingArticles: 'Matching articles',
		sources: 'Sources',
		searching: 'Searching…',
		answering: 'Answering…',
		answerComplete: 'Answer complete',
		answerStopped: 'Answer stopped',
		downloadingModel: 'Downloading the search model: {loaded} of {total} (first time only)',
		preparingSearch: 'Preparing search…',
		queued: 'You are number {n} in line, about {s} s',
		queuedPosition: 'You are number {n} in line',
		reconnecting: 'Connection lost; retrying in {s} s',
		reconnected: 'Reconnected',
		answersUnavailable: 'Answers are unavailable right now; the matching articles are below',
		searchOnly: 'Search-only mode: answers are turned off on this site',
		noMatches: 'No matching articles',
		serverSearch: 'This browser cannot run the search model; the server will search instead',
		needsBuild: 'The concierge needs a build: run astro build once',
		modelFailed: 'The search model could not be loaded ({reason})',
		you: 'You: ',
		concierge: 'Concierge: ',
	},
	ja: {
		launcher: 'このブログに質問',
		dialogTitle: 'このブログへの質問',
		placeholder: 'ブログの内容について質問してください',
		send: '送信',
		stop: '停止',
		close: '閉じる',
		clearConversation: '会話を消去',
		suggestedQuestions: '質問の例',
		matchingArticles: '関連する記事',
		sources: '出典',
		searching: '検索しています…',
		answering: '回答しています…',
		answerComplete: '回答が完了しました',
		answerStopped: '回答を停止しました',
		downloadingModel: '検索モデルをダウンロードしています: {loaded} / {total}（初回のみ）',
		preparingSearch: '検索を準備しています…',
		queued: '現在{n}番目です。あと約{s}秒お待ちください',
		queuedPosition: '現在{n}番目です。少々お待ちください',
		reconnecting: '接続が切れました。{s}秒後に再接続します',
		reconnected: '再接続しました',
		answersUnavailable: '現在は回答できません。関連する記事を下に表示しています',
		searchOnly: '検索のみのモードです。このサイトでは回答機能がオフになっています',
		noMatches: '関連する記事は見つかりませんでした',
		serverSearch: 'このブラウザーでは検索モデルを実行できないため、サーバーで検索します',
		needsBuild: 'コンシェルジュを使うには、一度 astro build を実行してください',
		modelFailed: '検索モデルを読み込めませんでした（{reason}）',
		you: 'あなた: ',
		concierge: 'コンシェルジュ: ',
	},
};

// Codes a correct island never causes (bad frames, stale ids) ask for a reload: an outdated page is the likely cause.
const EN_RELOAD = 'The question could not be sent; please reload the page and try again.';
const JA_RELOAD = '質問を送信できませんでした。ページを再読み込みしてお試しください。';

export const ERROR_TEXT: Record<IslandLanguage, Record<ErrorCode, string>> = {
	en: {
		INVALID_JSON: EN_RELOAD,
		UNKNOWN_ACTION: EN_RELOAD,
		INVALID_QUESTION: 'Please type a question.',
		QUESTION_TOO_LONG: 'The question is too long; please shorten it.',
		INVALID_CHUNK_IDS: EN_RELOAD,
		TOO_MANY_CHUNK_IDS: EN_RELOAD,
		JOB_IN_PROGRESS: 'An answer is still being written; wait for it or stop it first.',
		NO_JOB: 'There is no answer to stop.',
		BUSY: 'The concierge is busy right now; please try again in a moment.',
		QUEUE_TIMEOUT: 'The wait grew too long, so the question was dropped; please try again.',
		RATE_LIMITED: 'Too many questions in a short time; please wait a little and try again.',
		UNAVAILABLE: 'Answers are unavailable right now; please try again later.',
		INTERNAL: 'Something went wrong on the server; please try again.',
	},
	ja: {
		INVALID_JSON: JA_RELOAD,
		UNKNOWN_ACTION: JA_RELOAD,
		INVALID_QUESTION: '質問を入力してください。',
		QUESTION_TOO_LONG: '質問が長すぎます。短くしてお試しください。',
		INVALID_CHUNK_IDS: JA_RELOAD,
		TOO_MANY_CHUNK_IDS: JA_RELOAD,
		JOB_IN_PROGRESS: '前の回答を作成中です。完了を待つか、停止してからお試しください。',
		NO_JOB: '停止する回答はありません。',
		BUSY: '現在混み合っています。しばらくしてからお試しください。',
		QUEUE_TIMEOUT: '待ち時間が長くなったため、質問を取り消しました。もう一度お試しください。',
		RATE_LIMITED: '短時間に質問が集中しています。少し時間をおいてお試しください。',
		UNAVAILABLE: '現在は回答できません。しばらくしてからお試しください。',
		INTERNAL: 'サーバーでエラーが発生しました。もう一度お試しください。',
	},
};

/** The friendly text of a sidecar error code, or `fallback` (the frame's own message) for a code this island does not know. */
export function errorText(lang: IslandLanguage, code: string, fallback: string): string {
	const table: Record<string, string> = ERROR_TEXT[lang];
	return Object.hasOwn(table, code) ? table[code]! : fallback;
}

/** Fills `{name}` placeholders; a name without a value stays as written, so a missing value shows rather than vanishes. */
export function formatText(template: string, values: Record<string, string | number>): string {
	return template.replace(/\{(\w+)\}/g, (placeholder, name: string) =>
		Object.hasOwn(values, name) ? String(values[name]) : placeholder,
	);
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB'];

/** A byte count in decimal units, with one decimal below 10 of a unit: `950 B`, `2.4 MB`, `118 MB`. */
export function formatBytes(n: number, lang: IslandLanguage): string {
	let unit = 0;
	let value = n;
	while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
		value /= 1000;
		unit++;
	}
	const digits = unit > 0 && value < 10 ? 1 : 0;
	return `${new Intl.NumberFormat(lang, { maximumFractionDigits: digits }).format(value)} ${BYTE_UNITS[unit]}`;
}

/** The language the island speaks: the configured one, else Japanese on a page whose `<html lang>` is Japanese, else English. */
export function pickLanguage(htmlLang: string | null | undefined, forced: IslandLanguage | null): IslandLanguage {
	if (forced) return forced;
	return htmlLang?.trim().split(/[-_]/)[0]?.toLowerCase() === 'ja' ? 'ja' : 'en';
}
