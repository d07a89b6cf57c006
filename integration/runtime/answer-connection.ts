// The island's WebSocket to the sidecar: opened on demand, reopened with backoff after a loss, frames parsed once.

import type { ClientMessage, ServerMessage } from '../../sidecar/protocol.ts';

/** `open` once connected; `retrying` with the delay before the next attempt after a failed or lost connection. */
export type ConnectionStatus = { status: 'connecting' } | { status: 'open' } | { status: 'retrying'; inMs: number } | { status: 'closed' };

export interface AnswerConnectionOptions {
	/** ws:, wss: or a path on the page's origin. */
	endpoint: string;
	onStatus: (status: ConnectionStatus) => void;
	onFrame: (frame: ServerMessage) => void;
	/** The socket closed while open (a job in flight is lost). */
	onLost: () => void;
}

export interface AnswerConnection {
	/** Resolves true once the socket is open, false if this attempt failed (a retry is then scheduled). */
	open(): Promise<boolean>;
	/** Sends a frame; false when the socket is not open. */
	send(message: ClientMessage): boolean;
	/** Closes the socket and stops retrying until the next `open`. */
	close(): void;
}

// Retries 1 s, 2 s, 4 s … up to 30 s apart, each ±20% so many visitors do not return at the same instant.
const FIRST_RETRY_MS = 1000;
const LAST_RETRY_MS = 30_000;

/** The WebSocket URL of `endpoint` as seen from `page` (a path becomes ws(s)://<page host><path>). */
export function resolveEndpoint(endpoint: string, page: URL): string {
	const url = new URL(endpoint, page);
	if (url.protocol === 'http:') url.protocol = 'ws:';
	else if (url.protocol === 'https:') url.protocol = 'wss:';
	return url.href;
}

export function createAnswerConnection(options: AnswerConnectionOptions): AnswerConnection {
	const url = resolveEndpoint(options.endpoint, new URL(location.href));
	let socket: WebSocket | undefined;
	let opening: Promise<boolean> | undefined;
	let retryTimer: ReturnType<typeof setTimeout> | undefined;
	let failures = 0;
	let closed = false;

	const scheduleRetry = (): void => {
		if (closed || retryTimer !== undefined) return;
		const delay = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** failures) * (0.8 + Math.random() * 0.4);
		failures++;
		options.onStatus({ status: 'retrying', inMs: delay });
		retryTimer = setTimeout(() => {
			retryTimer = undefined;
			void connection.open();
		}, delay);
	};

	const connection: AnswerConnection = {
		open() {
			closed = false;
			if (socket?.readyState === WebSocket.OPEN) return Promise.resolve(true);
			if (opening) return opening;
			clearTimeout(retryTimer);
			retryTimer = undefined;
			if (failures === 0) options.onStatus({ status: 'connecting' });
			opening = new Promise<boolean>((resolve) => {
				let current: WebSocket;
				try {
					current = new WebSocket(url);
				} catch {
					opening = undefined;
					scheduleRetry();
					resolve(false);
					return;
				}
				socket = current;
				let wasOpen = false;
				current.addEventListener('open', () => {
					wasOpen = true;
					failures = 0;
					opening = undefined;
					options.onStatus({ status: 'open' });
					resolve(true);
				});
				current.addEventListener('message', (event) => {
					if (typeof event.data !== 'string') return;
					let frame: unknown;
					try {
						frame = JSON.parse(event.data);
					} catch {
						return;
					}
					if (frame !== null && typeof frame === 'object' && typeof (frame as { type?: unknown }).type === 'string') {
						options.onFrame(frame as ServerMessage);
					}
				});
				current.addEventListener('close', () => {
					if (socket === current) socket = undefined;
					if (!wasOpen) {
						opening = undefined;
						resolve(false);
					} else if (!closed) {
						options.onLost();
					}
					scheduleRetry();
				});
			});
			return opening;
		},
		send(message) {
			if (socket?.readyState !== WebSocket.OPEN) return false;
			socket.send(JSON.stringify(message));
			return true;
		},
		close() {
			closed = true;
			clearTimeout(retryTimer);
			socket?.close(1000);
			socket = undefined;
			options.onStatus({ status: 'closed' });
		},
	};
	return connection;
}
