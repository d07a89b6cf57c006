import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** One step of a scripted stream; each becomes one network write unless it is a delay. */
export type ScriptedEvent =
	| { content: string }
	/** A thought the server separated from the answer, in `reasoning_content` or (Ollama, OpenRouter) `reasoning`. */
	| { reasoning: string; field?: 'reasoning_content' | 'reasoning' }
	| { finish: 'stop' | 'length' | (string & {}) }
	| { usage: { prompt_tokens: number; completion_tokens: number } }
	/** Milliseconds to wait before the next event, so it travels in a network chunk of its own. */
	| { delay: number }
	/** Written as is: comments, keep-alives, halves of a line, non-SSE garbage. */
	| { raw: string };

/** What the server answers one request with. */
export interface ScriptedReply {
	/** An HTTP status other than 200 answers with `errorBody` instead of a stream. */
	status?: number;
	errorBody?: string;
	events?: readonly ScriptedEvent[];
	/** Ends the stream with `data: [DONE]`. @default true */
	done?: boolean;
}

/** A request as the scripted server saw it. */
export interface RecordedRequest {
	url: string;
	headers: IncomingHttpHeaders;
	body: any;
	/** Scripted events written before the reply ended or the client left. */
	eventsSent: number;
	/** Settles once the response is over: `disconnected` when the client left before the end. */
	closed: Promise<'finished' | 'disconnected'>;
}

/** A running scripted server; `url` is the API root to give a provider as `baseUrl`. */
export interface OpenAiServer {
	url: string;
	requests: RecordedRequest[];
	close(): Promise<void>;
}

/**
 * Starts an OpenAI-compatible server on 127.0.0.1 that answers `POST …/chat/completions` with
 * the server-sent events `script` lists for that request, and stops writing when the client leaves.
 */
export async function startOpenAiServer(script: (request: { body: any; headers: IncomingHttpHeaders }) => ScriptedReply): Promise<OpenAiServer> {
	const requests: RecordedRequest[] = [];
	const server = createServer(async (req, res) => {
		const parts: Buffer[] = [];
		for await (const part of req) parts.push(part as Buffer);
		if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
			res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
			return;
		}
		let body: any;
		try {
			body = JSON.parse(Buffer.concat(parts).toString('utf8'));
		} catch {
			res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
			return;
		}
		let settle!: (how: 'finished' | 'disconnected') => void;
		const record: RecordedRequest = {
			url: req.url,
			headers: req.headers,
			body,
			eventsSent: 0,
			closed: new Promise((resolve) => (settle = resolve)),
		};
		requests.push(record);
		res.on('close', () => settle(res.writableFinished ? 'finished' : 'disconnected'));

		const reply = script({ body, headers: req.headers });
		if (reply.status !== undefined && reply.status !== 200) {
			res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.errorBody ?? '');
			return;
		}
		res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
		res.flushHeaders();
		const id = `chatcmpl-${requests.length}`;
		const chunk = (fields: object): string =>
			`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: body.model, ...fields })}\n\n`;
		for (const event of reply.events ?? []) {
			// The client left: a real server stops generating, and so does this one.
			if (res.destroyed) return;
			if ('delay' in event) {
				await sleep(event.delay);
				continue;
			}
			let text: string;
			if ('raw' in event) text = event.raw;
			else if ('content' in event) text = chunk({ choices: [{ index: 0, delta: { content: event.content }, finish_reason: null }] });
			else if ('reasoning' in event) {
				const delta = { [event.field ?? 'reasoning_content']: event.reasoning };
				text = chunk({ choices: [{ index: 0, delta, finish_reason: null }] });
			} else if ('finish' in event) text = chunk({ choices: [{ index: 0, delta: {}, finish_reason: event.finish }] });
			else text = chunk({ choices: [], usage: { ...event.usage, total_tokens: event.usage.prompt_tokens + event.usage.completion_tokens } });
			res.write(text);
			record.eventsSent++;
		}
		if (res.destroyed) return;
		res.end(reply.done === false ? undefined : 'data: [DONE]\n\n');
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', resolve);
	});
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests,
		close() {
			server.closeAllConnections();
			return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
		},
	};
}
