// The concierge WebSocket protocol, version 1: the one definition the sidecar and the browser share.
// Browser-safe (no node: imports). docs/protocol.md describes every frame, error code and close code.

/** Version sent in `hello`; a client that does not know it should not send jobs. */
export const PROTOCOL_VERSION = 1;

/** Path of the WebSocket endpoint on the sidecar's port. */
export const CONCIERGE_PATH = '/concierge';

/** Limits checked where client data arrives; the sidecar's options can lower or raise them. */
export interface ProtocolLimits {
	/** Largest frame in bytes; ws closes the socket with 1009 above it. */
	maxPayload: number;
	/** Longest question in characters. */
	maxQuestionChars: number;
	/** Most chunk ids in one generate. */
	maxChunkIds: number;
}

/** The defaults of {@link ProtocolLimits}. */
export const DEFAULT_LIMITS: ProtocolLimits = {
	maxPayload: 16 * 1024,
	maxQuestionChars: 1000,
	maxChunkIds: 16,
};

/** Error codes of `error` frames. Stable: clients may branch on them. */
export const ERROR_CODES = {
	/** The frame is not JSON, or not a JSON object. */
	INVALID_JSON: 'INVALID_JSON',
	/** `action` is missing or not one of generate, query, cancel. */
	UNKNOWN_ACTION: 'UNKNOWN_ACTION',
	/** `question` is missing, not a string, or empty. */
	INVALID_QUESTION: 'INVALID_QUESTION',
	/** `question` is longer than the limit. */
	QUESTION_TOO_LONG: 'QUESTION_TOO_LONG',
	/** `chunk_ids` is not an array of chunk ids (`<url>#<n>`), or `kb_version` is not a string. */
	INVALID_CHUNK_IDS: 'INVALID_CHUNK_IDS',
	/** More `chunk_ids` than the limit. */
	TOO_MANY_CHUNK_IDS: 'TOO_MANY_CHUNK_IDS',
	/** This connection already has a job queued or running. */
	JOB_IN_PROGRESS: 'JOB_IN_PROGRESS',
	/** `cancel` without a job to cancel. */
	NO_JOB: 'NO_JOB',
	/** The queue is full; try again later. */
	BUSY: 'BUSY',
	/** The job waited in the queue longer than the server allows. */
	QUEUE_TIMEOUT: 'QUEUE_TIMEOUT',
	/** Too many jobs from this address; try again later. */
	RATE_LIMITED: 'RATE_LIMITED',
	/** The knowledge base (Chroma) cannot be reached. */
	UNAVAILABLE: 'UNAVAILABLE',
	/** Anything else went wrong on the server; the message says what. */
	INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** Notice codes of `notice` frames, shown apart from the answer. */
export const NOTICE_CODES = {
	/** The answer stopped at max tokens. */
	TRUNCATED: 'TRUNCATED',
	/** No article matched the question; no model was asked. */
	NO_CONTEXT: 'NO_CONTEXT',
} as const;

export type NoticeCode = (typeof NOTICE_CODES)[keyof typeof NOTICE_CODES];

/** WebSocket close codes the server uses. */
export const CLOSE_CODES = {
	/** The server is shutting down. */
	GOING_AWAY: 1001,
	/** A frame larger than maxPayload (sent by ws itself, which cannot answer such a frame). */
	MESSAGE_TOO_BIG: 1009,
	/** Too many connections from one address. */
	TRY_AGAIN_LATER: 1013,
} as const;

/** Client → server: answer `question` from these chunks (ids from kb.json, best first). */
export interface GenerateMessage {
	action: 'generate';
	question: string;
	chunk_ids: string[];
	kb_version: string;
}

/** Client → server: search and answer on the server (the browser could not search). */
export interface QueryMessage {
	action: 'query';
	question: string;
}

/** Client → server: stop this connection's job. */
export interface CancelMessage {
	action: 'cancel';
}

export type ClientMessage = GenerateMessage | QueryMessage | CancelMessage;

/** One context given to the model; citation [n] is `items[n-1]`. */
export interface ContextItem {
	id: string;
	title: string;
	/** Page URL with the section anchor, e.g. `/blog/post/#install`. */
	url: string;
	/** Cosine distance from the question, when the server searched. */
	distance?: number;
}

export type FinishReason = 'stop' | 'length' | 'cancelled' | 'no_context';

export type ServerMessage =
	| { type: 'hello'; protocol: number; kb_version: string | null }
	| { type: 'queued'; position: number; estimated_wait_ms?: number }
	| { type: 'running' }
	| { type: 'contexts'; mode: 'ids' | 'query'; items: ContextItem[] }
	| { type: 'token'; content: string }
	| { type: 'notice'; code: NoticeCode; content: string }
	| { type: 'done'; finish: FinishReason; stats: { ttft_ms: number | null; tokens: number; tokens_per_s: number | null } }
	| { type: 'error'; code: ErrorCode; message: string };

/** A client frame that failed its checks. */
export interface ProtocolError {
	code: ErrorCode;
	message: string;
}

// Ids are `<url>#<n>`: a path or absolute URL without whitespace or control characters, then a chunk number.
// Percent-encoded Japanese paths run nine characters a letter, hence the generous length; maxPayload bounds the rest.
const chunkIdPattern = /^(?:\/|https?:\/\/)[^\s#\u0000-\u001f\u007f]{0,2000}#\d{1,6}$/;

/** Checks a client frame as it arrives: the message, or the error to answer with. */
export function parseClientMessage(
	text: string,
	limits: ProtocolLimits = DEFAULT_LIMITS,
): { ok: true; message: ClientMessage } | ({ ok: false } & ProtocolError) {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return fail('INVALID_JSON', 'The frame is not valid JSON.');
	}
	if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('INVALID_JSON', 'The frame must be a JSON object.');
	const frame = value as Record<string, unknown>;
	switch (frame.action) {
		case 'cancel':
			return { ok: true, message: { action: 'cancel' } };
		case 'query':
		case 'generate': {
			const question = frame.question;
			if (typeof question !== 'string' || question.trim() === '') return fail('INVALID_QUESTION', '"question" must be a non-empty string.');
			if ([...question].length > limits.maxQuestionChars) {
				return fail('QUESTION_TOO_LONG', `"question" is longer than ${limits.maxQuestionChars} characters.`);
			}
			if (frame.action === 'query') return { ok: true, message: { action: 'query', question: question.trim() } };
			const ids = frame.chunk_ids;
			if (!Array.isArray(ids)) return fail('INVALID_CHUNK_IDS', '"chunk_ids" must be an array of chunk ids.');
			if (ids.length > limits.maxChunkIds) return fail('TOO_MANY_CHUNK_IDS', `"chunk_ids" holds more than ${limits.maxChunkIds} ids.`);
			const bad = ids.findIndex((id) => typeof id !== 'string' || !chunkIdPattern.test(id));
			if (bad !== -1) return fail('INVALID_CHUNK_IDS', `"chunk_ids"[${bad}] is not a chunk id of the form <url>#<n>.`);
			if (typeof frame.kb_version !== 'string') return fail('INVALID_CHUNK_IDS', '"kb_version" must be the string kb.json carries.');
			return {
				ok: true,
				message: { action: 'generate', question: question.trim(), chunk_ids: [...new Set(ids as string[])], kb_version: frame.kb_version },
			};
		}
		default:
			return fail('UNKNOWN_ACTION', '"action" must be "generate", "query" or "cancel".');
	}
}

function fail(code: ErrorCode, message: string): { ok: false } & ProtocolError {
	return { ok: false, code, message };
}
