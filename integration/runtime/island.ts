// The concierge dialog, loaded on first open: in-browser search, the streamed answer and the conversation.
// Everything from kb.json, the sidecar or the visitor is written with textContent: no HTML is ever parsed.

import SearchWorker from 'virtual:astro-concierge/search-worker';
import { DEFAULT_LIMITS, type ContextItem, type ServerMessage } from '../../sidecar/protocol.ts';
import { createAnswerConnection, type AnswerConnection } from './answer-connection.ts';
import { ISLAND_STYLES } from './island-styles.ts';
import type { IslandConfig } from './island-config.ts';
import { parseAnswer, renderAnswer } from './render-answer.ts';
import { createSearchClient, type SearchClient, type SearchMatch, type SearchState } from './search-client.ts';
import { errorText, formatBytes, formatText, pickLanguage, UI_TEXT, type UiText } from './ui-text.ts';

/** A link in a turn's list: browser matches first, then the sidecar's numbered contexts. */
interface Source {
	title: string;
	heading: string;
	url: string;
}

type TurnState = 'searching' | 'waiting' | 'queued' | 'answering' | 'done' | 'stopped' | 'failed';

interface Turn {
	question: string;
	sources: Source[];
	/** True once `sources` are the contexts the answer cites ([n] is sources[n-1]). */
	cited: boolean;
	answer: string;
	notices: string[];
	state: TurnState;
	queue: { position: number; waitMs: number | undefined } | null;
}

/** What the launcher drives. */
export interface Island {
	open(returnFocusTo?: HTMLElement): void;
	/** Loads the search (kb.json, runtime, model) ahead of the first open. */
	prefetch(): void;
}

const STORAGE_KEY = 'astro-concierge:conversation';
const MAX_STORED_TURNS = 20;
const finalStates: readonly TurnState[] = ['done', 'stopped', 'failed'];

export function createIsland(config: IslandConfig): Island {
	const lang = pickLanguage(document.documentElement.lang, config.lang);
	const t: UiText = UI_TEXT[lang];
	const search = createSearchClient({
		kbUrl: `${config.assetsUrl}kb.json`,
		runtimeUrl: `${config.assetsUrl}runtime/`,
		modelsUrl: config.modelsUrl,
		createWorker: () => new SearchWorker(),
	});
	const turns: Turn[] = restoreTurns();
	let current: Turn | null = null;
	let returnFocus: HTMLElement | undefined;
	let connectionNote = '';

	// The dialog lives in its own shadow root so the blog's CSS and ours never meet; --concierge-* variables theme it.
	const host = document.createElement('div');
	host.setAttribute('data-astro-concierge-panel', '');
	const root = host.attachShadow({ mode: 'open' });
	const sheet = new CSSStyleSheet();
	sheet.replaceSync(ISLAND_STYLES);
	root.adoptedStyleSheets = [sheet];

	const el = <K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] => {
		const node = document.createElement(tag);
		if (className) node.className = className;
		if (text !== undefined) node.textContent = text;
		return node;
	};

	const dialog = el('dialog', 'panel');
	dialog.setAttribute('aria-labelledby', 'concierge-title');
	const frame = el('div', 'frame');
	const header = el('header', 'header');
	const title = el('h2', 'title', t.dialogTitle);
	title.id = 'concierge-title';
	const clearButton = el('button', 'text-button', t.clearConversation);
	clearButton.type = 'button';
	const closeButton = el('button', 'icon-button', '×');
	closeButton.type = 'button';
	closeButton.setAttribute('aria-label', t.close);
	header.append(title, clearButton, closeButton);

	const body = el('div', 'body');
	const progress = el('div', 'progress');
	const progressText = el('p', 'progress-text');
	const progressBar = el('progress');
	progressBar.max = 1;
	progress.append(progressText, progressBar);
	progress.hidden = true;
	const connection = el('p', 'connection');
	connection.hidden = true;

	const form = el('form', 'ask');
	const input = el('textarea', 'question');
	input.rows = 1;
	input.maxLength = DEFAULT_LIMITS.maxQuestionChars;
	input.placeholder = t.placeholder;
	input.setAttribute('aria-label', t.placeholder);
	const send = el('button', 'send', t.send);
	send.type = 'submit';
	const stop = el('button', 'stop', t.stop);
	stop.type = 'button';
	stop.hidden = true;
	form.append(input, send, stop);

	// Screen readers hear these state changes only, never each token.
	const announcer = el('p', 'visually-hidden');
	announcer.setAttribute('role', 'status');
	announcer.setAttribute('aria-live', 'polite');

	frame.append(header, body, progress, connection, form, announcer);
	dialog.append(frame);
	root.append(dialog);

	const answers: AnswerConnection | null =
		config.endpoint === null
			? null
			: createAnswerConnection({
					endpoint: config.endpoint,
					onStatus: (status) => {
						if (status.status === 'retrying') {
							connectionNote = formatText(t.reconnecting, { s: Math.ceil(status.inMs / 1000) });
						} else if (status.status === 'open' && connectionNote !== '') {
							connectionNote = t.reconnected;
						} else if (status.status === 'closed') {
							connectionNote = '';
						}
						renderConnection();
					},
					onFrame: (frame) => handleFrame(frame),
					onLost: () => {
						if (current && !finalStates.includes(current.state)) {
							current.notices.push(t.answersUnavailable);
							finish(current, 'failed');
						}
					},
				});

	const announce = (text: string): void => {
		// Clearing first makes the same words ("Answer complete") announced again for the next answer.
		announcer.textContent = '';
		requestAnimationFrame(() => (announcer.textContent = text));
	};

	const safeHref = (url: string): string | null => {
		try {
			const target = new URL(url, location.href);
			return target.origin === location.origin ? target.href : null;
		} catch {
			return null;
		}
	};

	const link = (source: Source, label: string): HTMLElement => {
		const href = safeHref(source.url);
		if (href === null) return el('span', 'source-title', label);
		const anchor = el('a', 'source-link', label);
		anchor.href = href;
		anchor.addEventListener('click', () => {
			saveTurns();
			dialog.close();
		});
		return anchor;
	};

	const sourceLabel = (source: Source): string => (source.heading ? `${source.title} › ${source.heading}` : source.title);

	const renderTurn = (turn: Turn): HTMLElement => {
		const article = el('article', 'turn');
		const question = el('p', 'you');
		question.append(el('span', 'visually-hidden', t.you), document.createTextNode(turn.question));
		article.append(question);

		if (turn.sources.length > 0) {
			const section = el('section', 'sources');
			section.append(el('h3', 'sources-title', turn.cited ? t.sources : t.matchingArticles));
			const list = el(turn.cited ? 'ol' : 'ul', 'source-list');
			for (const source of turn.sources) {
				const item = el('li');
				item.append(link(source, sourceLabel(source)));
				list.append(item);
			}
			section.append(list);
			article.append(section);
		} else if (turn.state !== 'searching' && turn.state !== 'waiting' && turn.state !== 'queued' && !turn.answer) {
			if (turn.notices.length === 0) article.append(el('p', 'note', t.noMatches));
		}

		if (turn.state === 'searching') article.append(el('p', 'note', t.searching));
		if (turn.state === 'queued' && turn.queue) {
			const { position, waitMs } = turn.queue;
			const text = waitMs === undefined ? formatText(t.queuedPosition, { n: position }) : formatText(t.queued, { n: position, s: Math.max(1, Math.round(waitMs / 1000)) });
			article.append(el('p', 'note', text));
		}

		if (turn.answer) {
			const answer = el('div', 'answer');
			answer.append(el('span', 'visually-hidden', t.concierge));
			answer.setAttribute('aria-busy', String(turn.state === 'answering'));
			answer.append(
				renderAnswer(document, parseAnswer(turn.answer), (n) => {
					const source = turn.cited ? turn.sources[n - 1] : undefined;
					const href = source ? safeHref(source.url) : null;
					return source && href ? { href, label: sourceLabel(source) } : null;
				}),
			);
			answer.addEventListener('click', (event) => {
				if ((event.target as Element).closest('a')) {
					saveTurns();
					dialog.close();
				}
			});
			article.append(answer);
		}
		for (const notice of turn.notices) article.append(el('p', 'notice', notice));
		if (turn.state === 'stopped') article.append(el('p', 'note', t.answerStopped));
		return article;
	};

	const renderSuggestions = (): HTMLElement | null => {
		const questions = config.suggestions[lang];
		if (questions.length === 0) return null;
		const section = el('section', 'suggestions');
		section.append(el('h3', 'sources-title', t.suggestedQuestions));
		const list = el('ul', 'suggestion-list');
		for (const question of questions) {
			const button = el('button', 'suggestion', question);
			button.type = 'button';
			button.addEventListener('click', () => void ask(question));
			const item = el('li');
			item.append(button);
			list.append(item);
		}
		section.append(list);
		return section;
	};

	const render = (): void => {
		// Follows the answer only while the reader is at the bottom; scrolling up to read stops the following.
		const atBottom = body.scrollHeight - body.scrollTop - body.clientHeight < 24;
		const nodes: HTMLElement[] = turns.map(renderTurn);
		if (turns.length === 0) {
			const suggestions = renderSuggestions();
			if (suggestions) nodes.push(suggestions);
		}
		body.replaceChildren(...nodes);
		if (atBottom) body.scrollTop = body.scrollHeight;
		const busy = current !== null && !finalStates.includes(current.state);
		send.hidden = busy;
		stop.hidden = !busy;
		clearButton.hidden = turns.length === 0 || busy;
	};

	const renderConnection = (): void => {
		connection.textContent = connectionNote;
		connection.hidden = connectionNote === '';
	};

	const renderProgress = (state: SearchState): void => {
		// Lets a site's CSS (and the tests) see whether questions are searched here or by the sidecar.
		host.dataset.search = state.status;
		let text = '';
		if (state.status === 'loading') {
			text =
				state.total > 0
					? formatText(t.downloadingModel, { loaded: formatBytes(state.loaded, lang), total: formatBytes(state.total, lang) })
					: t.preparingSearch;
			progressBar.hidden = state.total === 0;
			if (state.total > 0) progressBar.value = state.loaded / state.total;
		} else if (state.status === 'failed') {
			progressBar.hidden = true;
			if (state.reason === 'no_kb') text = t.needsBuild;
			else if (state.reason === 'unsupported') text = config.endpoint === null ? formatText(t.modelFailed, { reason: state.message }) : t.serverSearch;
			else text = formatText(t.modelFailed, { reason: state.message });
		}
		progressText.textContent = text;
		progress.hidden = text === '';
	};
	search.subscribe(renderProgress);

	const saveTurns = (): void => {
		try {
			const stored = turns.slice(-MAX_STORED_TURNS).map((turn) => ({
				...turn,
				state: finalStates.includes(turn.state) ? turn.state : 'stopped',
				queue: null,
			}));
			sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ version: 1, turns: stored }));
		} catch {
			// Storage full or disabled: the conversation simply does not survive navigation.
		}
	};

	const finish = (turn: Turn, state: TurnState): void => {
		turn.state = state;
		turn.queue = null;
		if (turn === current) current = null;
		if (state === 'done') announce(t.answerComplete);
		else if (state === 'stopped') announce(t.answerStopped);
		saveTurns();
		render();
	};

	const fromMatches = (matches: SearchMatch[]): Source[] =>
		matches.map((match) => ({ title: match.title, heading: match.heading, url: match.anchor ? `${match.url}#${match.anchor}` : match.url }));

	const fromContexts = (items: ContextItem[]): Source[] => items.map((item) => ({ title: item.title, heading: '', url: item.url }));

	function handleFrame(frame: ServerMessage): void {
		const turn = current;
		if (!turn) return;
		switch (frame.type) {
			case 'queued':
				turn.state = 'queued';
				turn.queue = { position: frame.position, waitMs: frame.estimated_wait_ms };
				break;
			case 'running':
				turn.state = 'answering';
				turn.queue = null;
				announce(t.answering);
				break;
			case 'contexts': {
				// The contexts keep the browser's heading labels where the ids match, so the list does not jump.
				const known = new Map(turn.sources.map((source) => [source.url, source]));
				turn.sources = fromContexts(frame.items).map((source) => known.get(source.url) ?? source);
				turn.cited = true;
				break;
			}
			case 'token':
				turn.answer += frame.content;
				break;
			case 'notice':
				turn.notices.push(frame.content);
				break;
			case 'done':
				finish(turn, frame.finish === 'cancelled' ? 'stopped' : 'done');
				return;
			case 'error':
				turn.notices.push(errorText(lang, frame.code, frame.message));
				finish(turn, 'failed');
				return;
			default:
				return;
		}
		render();
	}

	async function searchInBrowser(turn: Turn): Promise<{ ids: string[]; kbVersion: string } | null> {
		try {
			const { matches, kbVersion } = await search.search(turn.question);
			turn.sources = fromMatches(matches);
			render();
			return { ids: matches.map((match) => match.id), kbVersion };
		} catch {
			return null;
		}
	}

	async function ask(question: string): Promise<void> {
		question = question.trim();
		if (question === '' || (current && !finalStates.includes(current.state))) return;
		const turn: Turn = { question, sources: [], cited: false, answer: '', notices: [], state: 'searching', queue: null };
		turns.push(turn);
		current = turn;
		input.value = '';
		render();
		void search.load().catch(() => {});

		// The browser searches when its model is ready; until then (or if it cannot) the sidecar searches.
		let found = search.state.status === 'ready' ? await searchInBrowser(turn) : null;
		if (found && found.ids.length === 0) {
			finish(turn, 'done');
			return;
		}
		if (!answers) {
			found ??= await search.load().then(() => searchInBrowser(turn), () => null);
			turn.notices.push(t.searchOnly);
			finish(turn, found ? 'done' : 'failed');
			return;
		}
		turn.state = 'waiting';
		render();
		const open = await answers.open();
		if (turn !== current) return;
		const sent =
			open &&
			answers.send(
				found
					? { action: 'generate', question, chunk_ids: found.ids.slice(0, DEFAULT_LIMITS.maxChunkIds), kb_version: found.kbVersion }
					: { action: 'query', question },
			);
		if (!sent) {
			turn.notices.push(t.answersUnavailable);
			turn.state = 'searching';
			render();
			// Without the sidecar the in-browser results are all there is, so they are worth waiting for.
			found ??= await search.load().then(() => searchInBrowser(turn), () => null);
			finish(turn, 'failed');
		}
	}

	form.addEventListener('submit', (event) => {
		event.preventDefault();
		void ask(input.value);
	});
	input.addEventListener('keydown', (event) => {
		// Enter sends, Shift+Enter breaks the line; never while an IME is composing Japanese.
		if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
			event.preventDefault();
			void ask(input.value);
		}
	});
	stop.addEventListener('click', () => {
		const turn = current;
		if (!turn) return;
		if (!answers?.send({ action: 'cancel' })) finish(turn, 'stopped');
	});
	clearButton.addEventListener('click', () => {
		turns.length = 0;
		saveTurns();
		render();
		input.focus();
	});
	closeButton.addEventListener('click', () => dialog.close());
	// A click on the backdrop lands on the dialog itself; clicks inside land on the frame.
	dialog.addEventListener('click', (event) => {
		if (event.target === dialog) dialog.close();
	});
	dialog.addEventListener('close', () => {
		saveTurns();
		if (!current) answers?.close();
		returnFocus?.focus();
	});
	addEventListener('pagehide', saveTurns);
	// Astro's view transitions replace <body>; the panel moves to the new one with its state intact.
	document.addEventListener('astro:after-swap', () => {
		if (!host.isConnected) document.body.append(host);
	});
	document.body.append(host);
	render();

	return {
		open(from) {
			returnFocus = from;
			if (!host.isConnected) document.body.append(host);
			if (!dialog.open) dialog.showModal();
			render();
			body.scrollTop = body.scrollHeight;
			input.focus();
			void search.load().catch(() => {});
			void answers?.open();
		},
		prefetch() {
			void search.load().catch(() => {});
		},
	};
}

function restoreTurns(): Turn[] {
	try {
		const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as { version?: number; turns?: unknown } | null;
		if (stored?.version !== 1 || !Array.isArray(stored.turns)) return [];
		return stored.turns.filter(isTurn);
	} catch {
		return [];
	}
}

function isTurn(value: unknown): value is Turn {
	const turn = value as Turn;
	return (
		typeof turn === 'object' &&
		turn !== null &&
		typeof turn.question === 'string' &&
		typeof turn.answer === 'string' &&
		Array.isArray(turn.sources) &&
		turn.sources.every((source) => typeof source?.title === 'string' && typeof source.url === 'string' && typeof source.heading === 'string') &&
		Array.isArray(turn.notices) &&
		turn.notices.every((notice) => typeof notice === 'string') &&
		finalStates.includes(turn.state)
	);
}
