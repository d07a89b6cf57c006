// Main-thread side of the search worker: one worker per page, loaded on first use, with its state observable.

import type { SearchFailure, SearchMatch, SearchWorkerEvent, SearchWorkerRequest } from './search-worker.ts';

export type { SearchFailure, SearchMatch } from './search-worker.ts';

/** Where the search stands: nothing asked yet, downloading (bytes so far of total), usable, or given up. */
export type SearchState =
	| { status: 'idle' }
	| { status: 'loading'; loaded: number; total: number; kbVersion: string | null }
	| { status: 'ready'; kbVersion: string }
	| { status: 'failed'; reason: SearchFailure; message: string; kbVersion: string | null };

/** Matches for one question, and the kb.json version they come from (sent with `generate`). */
export interface SearchResponse {
	matches: SearchMatch[];
	kbVersion: string;
}

export interface SearchClientOptions {
	kbUrl: string;
	runtimeUrl: string;
	modelsUrl: string;
	createWorker: () => Worker;
}

export interface SearchClient {
	readonly state: SearchState;
	/** Calls `listener` on every state change; returns the unsubscribe function. */
	subscribe(listener: (state: SearchState) => void): () => void;
	/** Starts loading kb.json, the runtime and the model (once); resolves when the search is ready, rejects if it failed. */
	load(): Promise<void>;
	/** Embeds and searches `question`; rejects when the search is not ready or the worker fails. */
	search(question: string): Promise<SearchResponse>;
	/** Embeds each text as a query (`query: ` prefix from kb.json), as `search` does. */
	embed(texts: string[]): Promise<number[][]>;
	dispose(): void;
}

export function createSearchClient(options: SearchClientOptions): SearchClient {
	let state: SearchState = { status: 'idle' };
	let worker: Worker | undefined;
	let loaded: Promise<void> | undefined;
	let nextId = 1;
	const listeners = new Set<(state: SearchState) => void>();
	const pending = new Map<number, { resolve: (event: SearchWorkerEvent) => void; reject: (error: Error) => void }>();

	const setState = (next: SearchState): void => {
		state = next;
		for (const listener of listeners) listener(state);
	};
	const kbVersionOf = (current: SearchState): string | null => ('kbVersion' in current ? current.kbVersion : null);

	const request = (message: SearchWorkerRequest & { id: number }): Promise<SearchWorkerEvent> =>
		new Promise((resolve, reject) => {
			pending.set(message.id, { resolve, reject });
			worker!.postMessage(message);
		});

	const ensureReady = async (): Promise<void> => {
		await client.load();
		if (state.status !== 'ready') throw new Error('the search is not ready');
	};

	const client: SearchClient = {
		get state() {
			return state;
		},
		subscribe(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		load() {
			loaded ??= new Promise<void>((resolve, reject) => {
				setState({ status: 'loading', loaded: 0, total: 0, kbVersion: null });
				try {
					worker = options.createWorker();
				} catch (error) {
					setState({ status: 'failed', reason: 'unsupported', message: String(error), kbVersion: null });
					reject(new Error(`the search worker could not start (${String(error)})`));
					return;
				}
				worker.addEventListener('error', (event) => {
					const message = event.message || 'the search worker stopped';
					if (state.status !== 'ready') setState({ status: 'failed', reason: 'error', message, kbVersion: kbVersionOf(state) });
					for (const { reject: fail } of pending.values()) fail(new Error(message));
					pending.clear();
					reject(new Error(message));
				});
				worker.addEventListener('message', (message: MessageEvent<SearchWorkerEvent>) => {
					const event = message.data;
					switch (event.type) {
						case 'kb':
							if (state.status === 'loading') setState({ ...state, kbVersion: event.kbVersion });
							return;
						case 'progress':
							if (state.status === 'loading') setState({ ...state, loaded: event.loaded, total: event.total });
							return;
						case 'ready':
							setState({ status: 'ready', kbVersion: kbVersionOf(state) ?? '' });
							resolve();
							return;
						case 'failed':
							setState({ status: 'failed', reason: event.reason, message: event.message, kbVersion: kbVersionOf(state) });
							reject(new Error(event.message));
							return;
						default: {
							const waiter = pending.get(event.id);
							pending.delete(event.id);
							if (event.type === 'error') waiter?.reject(new Error(event.message));
							else waiter?.resolve(event);
						}
					}
				});
				worker.postMessage({ type: 'load', kbUrl: options.kbUrl, runtimeUrl: options.runtimeUrl, modelsUrl: options.modelsUrl });
			});
			return loaded;
		},
		async search(question) {
			await ensureReady();
			const event = await request({ type: 'search', id: nextId++, question });
			if (event.type !== 'results') throw new Error(`unexpected ${event.type} from the search worker`);
			return { matches: event.matches, kbVersion: event.kbVersion };
		},
		async embed(texts) {
			await ensureReady();
			const event = await request({ type: 'embed', id: nextId++, texts });
			if (event.type !== 'embedded') throw new Error(`unexpected ${event.type} from the search worker`);
			return event.vectors;
		},
		dispose() {
			worker?.terminate();
			for (const { reject } of pending.values()) reject(new Error('the search was closed'));
			pending.clear();
			listeners.clear();
		},
	};
	return client;
}
