import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { connectChroma } from '../integration/sync-chroma.ts';
import type { Embedder, EmbedderDtype } from '../integration/create-embedder.ts';
import type { AnswerProvider } from './answer-provider.ts';
import { answerQuestion, type AnswerOutcome, type Question } from './answer-question.ts';
import { startChromaServer, type ChromaServer } from './chroma-server.ts';
import { ingestBundle } from './ingest-bundle.ts';
import { createJobQueue, QueueError } from './job-queue.ts';
import { createJsonLogger, type JsonLogger } from './json-logger.ts';
import { openKnowledgeBase, type KnowledgeBase } from './knowledge-base.ts';
import { loadLanguageModel } from './load-language-model.ts';
import { createMetrics } from './metrics.ts';
import {
	CLOSE_CODES,
	CONCIERGE_PATH,
	DEFAULT_LIMITS,
	PROTOCOL_VERSION,
	parseClientMessage,
	type ErrorCode,
	type ProtocolLimits,
	type ServerMessage,
} from './protocol.ts';
import { createQaLog } from './qa-log.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { serveSite } from './serve-site.ts';
import { SIDECAR_DEFAULTS } from './sidecar-defaults.ts';

/** Options of {@link createSidecar}; every default is in SIDECAR_DEFAULTS. */
export interface SidecarOptions {
	port?: number;
	host?: string;
	/** A provider the caller made and keeps (and disposes); otherwise `model` is loaded and owned. */
	provider?: AnswerProvider;
	/** Path of the GGUF model to load when no provider is given. */
	model?: string;
	threads?: number;
	contextSize?: number;
	chroma: { url: string } | { path: string };
	collection?: string;
	/** A private bundle to load into Chroma at start when its content version differs from the collection's. */
	bundle?: string;
	/** Embedding model for the sidecar's own search, when the one named in the collection is not loadable by name here. */
	embeddingModel?: string;
	embeddingDtype?: EmbedderDtype;
	/**
	 * A built Astro site (its dist folder) to serve on the same port, so one process serves pages and answers:
	 * through @astrojs/node's handler when the build has one (on-demand pages included), else as static files.
	 */
	site?: string;
	/** Origins allowed to connect; a browser page from any other origin is refused at the handshake. */
	origins?: string[];
	maxTokens?: number;
	temperature?: number;
	topK?: number;
	maxDistance?: number;
	margin?: number;
	minContextTokens?: number;
	flushChars?: string;
	queueMax?: number;
	queueTimeoutMs?: number;
	/** Jobs per minute per client address; 0 turns the limit off. */
	rateLimit?: number;
	/** Take the client address from X-Forwarded-For (behind a reverse proxy on this host). */
	trustProxy?: boolean;
	/** Answer /metrics to any address, not only loopback. */
	metricsPublic?: boolean;
	/** Q&A log file, or false for none. */
	qaLog?: string | false;
	limits?: Partial<ProtocolLimits>;
	heartbeatMs?: number;
	logger?: JsonLogger;
}

/** A running sidecar. */
export interface Sidecar {
	/** Where it listens, e.g. `http://127.0.0.1:8787`. */
	address: string;
	port: number;
	/** Finishes or cancels the running job, closes every socket, the model and Chroma (when it started them). */
	close(): Promise<void>;
}

/**
 * Starts the concierge service: a WebSocket endpoint at /concierge that answers questions one job at a time
 * from a local or remote model over the chunks in Chroma, with /healthz and /metrics on the same port.
 */
export async function createSidecar(options: SidecarOptions): Promise<Sidecar> {
	const settings = { ...SIDECAR_DEFAULTS, ...definedOnly(options) };
	const logger = options.logger ?? createJsonLogger();
	const limits: ProtocolLimits = { ...DEFAULT_LIMITS, ...options.limits };
	const cleanup: (() => Promise<void>)[] = [];
	const closeAll = async () => {
		for (const step of cleanup.reverse()) await step().catch((error) => logger.error('close_failed', { error }));
	};

	try {
		let chromaServer: ChromaServer | undefined;
		let chromaUrl: string;
		if ('url' in options.chroma) chromaUrl = options.chroma.url;
		else {
			chromaServer = await startChromaServer({ path: options.chroma.path });
			cleanup.push(() => chromaServer!.close());
			chromaUrl = chromaServer.url;
		}
		const client = await connectChroma(chromaUrl);
		if (options.bundle) {
			const result = await ingestBundle({ client, collection: settings.collection, bundle: options.bundle, onlyIfChanged: true });
			logger.info('bundle_loaded', { bundle: options.bundle, ...result });
		}
		const knowledgeBase = openKnowledgeBase(client, settings.collection);
		let info = await knowledgeBase.info().catch(() => undefined);
		if (!info) logger.warn('collection_missing', { collection: settings.collection, hint: 'run astro-concierge ingest <bundle>' });

		let provider = options.provider;
		if (!provider) {
			if (!options.model) throw new Error('createSidecar needs a model path (or a provider)');
			const model = await loadLanguageModel({ modelPath: options.model, threads: settings.threads, contextSize: settings.contextSize });
			cleanup.push(() => model.dispose());
			provider = model;
		}
		logger.info('provider_ready', { provider: provider.name, context_size: provider.contextSize, threads: settings.threads });
		const room = provider.contextSize - settings.maxTokens - settings.margin;
		if (room < settings.minContextTokens * 2) {
			throw new Error(
				`max tokens (${settings.maxTokens}) and the margin (${settings.margin}) leave ${room} tokens for the prompt in a ` +
					`${provider.contextSize}-token context; raise --context-size or lower --max-tokens`,
			);
		}

		// The query embedder is loaded on the first fallback search only: a sidecar whose browsers always search
		// themselves never holds it in memory, nor Transformers.js and its ONNX runtime (about 46 MB on import).
		let embedder: Promise<Embedder> | undefined;
		const embedQuery = async (question: string) => {
			embedder ??= (async () => {
				const current = info ?? (await knowledgeBase.info());
				const model = options.embeddingModel ?? current.model;
				const dtype = options.embeddingDtype ?? (current.dtype as EmbedderDtype | null) ?? 'q8';
				if (!model) throw new Error(`collection ${settings.collection} does not name its embedding model`);
				logger.info('embedder_loading', { model, dtype });
				const { createEmbedder } = await import('../integration/create-embedder.ts');
				return createEmbedder({ model, dtype });
			})();
			const loading = embedder;
			// A failed load (no collection yet, say) is tried again by the next question instead of failing for ever.
			const loaded = await loading.catch((error: unknown) => {
				if (embedder === loading) embedder = undefined;
				throw error;
			});
			const [vector] = await loaded.embedQueries([question]);
			return vector!;
		};
		cleanup.push(async () => {
			if (embedder) await (await embedder.catch(() => undefined))?.dispose();
		});

		const site = options.site ? await serveSite(options.site) : undefined;
		const metrics = createMetrics();
		const qaLog = settings.qaLog ? createQaLog({ path: settings.qaLog }) : undefined;
		if (qaLog) cleanup.push(() => qaLog.close());
		// Closed before the log (cleanup runs backwards), so the job cancelled at shutdown can still be logged.
		const queue = createJobQueue({ maxQueued: settings.queueMax, timeoutMs: settings.queueTimeoutMs });
		cleanup.push(() => queue.close());
		const rateLimiter = createRateLimiter({ perMinute: settings.rateLimit });

		const server: Server = createServer((request, response) => {
			handleHttp(request, response).catch((error) => {
				logger.error('http_failed', { error });
				if (!response.headersSent) response.writeHead(500).end();
			});
		});
		const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayload });

		const handleHttp = async (request: IncomingMessage, response: ServerResponse) => {
			const path = requestPath(request);
			if (request.method === 'GET' && path === '/healthz') {
				const chromaUp = await knowledgeBase.reachable();
				if (chromaUp && !info) info = await knowledgeBase.info().catch(() => undefined);
				const ok = chromaUp && info !== undefined;
				response.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
				response.end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', chroma: chromaUp, kb_version: info?.contentVersion ?? null }));
				return;
			}
			if (request.method === 'GET' && path === '/metrics') {
				// Behind a proxy on this host every request comes from loopback; a forwarded one is not local.
				const forwarded = settings.trustProxy && request.headers['x-forwarded-for'] !== undefined;
				if (!settings.metricsPublic && (forwarded || !isLoopback(request.socket.remoteAddress))) {
					response.writeHead(403).end();
					return;
				}
				metrics.setQueueDepth(queue.size);
				metrics.setConnections(wss.clients.size);
				response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics.render());
				return;
			}
			if (site && (await site(request, response))) return;
			response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
		};

		server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
			// Node stops watching an upgraded socket for errors; a client resetting it must not crash the process.
			socket.on('error', () => socket.destroy());
			if (requestPath(request) !== CONCIERGE_PATH) return refuse(socket, 404, 'Not Found');
			if (!originAllowed(request, settings.origins)) {
				logger.warn('origin_refused', { origin: request.headers.origin });
				return refuse(socket, 403, 'Forbidden');
			}
			wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
		});

		const connectionsByAddress = new Map<string, number>();
		wss.on('connection', (ws: WebSocket, request: IncomingMessage) => {
			const address = clientAddress(request, settings.trustProxy);
			const open = (connectionsByAddress.get(address) ?? 0) + 1;
			if (open > settings.maxConnectionsPerAddress) {
				ws.close(CLOSE_CODES.TRY_AGAIN_LATER, 'too many connections from this address');
				return;
			}
			connectionsByAddress.set(address, open);
			let job: AbortController | undefined;
			let alive = true;
			ws.on('pong', () => (alive = true));
			const heartbeat = setInterval(() => {
				if (!alive) return ws.terminate();
				alive = false;
				ws.ping();
			}, settings.heartbeatMs);
			const send = (message: ServerMessage) => {
				if (ws.readyState !== ws.OPEN) return;
				// A client that does not read its frames must not make the server hold them without end.
				if (ws.bufferedAmount > settings.maxBufferedBytes) return ws.terminate();
				ws.send(JSON.stringify(message));
			};
			const sendError = (code: ErrorCode, message: string) => send({ type: 'error', code, message });

			send({ type: 'hello', protocol: PROTOCOL_VERSION, kb_version: info?.contentVersion ?? null });
			ws.on('close', () => {
				clearInterval(heartbeat);
				const left = (connectionsByAddress.get(address) ?? 1) - 1;
				if (left > 0) connectionsByAddress.set(address, left);
				else connectionsByAddress.delete(address);
				// A visitor who leaves frees the model at once for the next one.
				job?.abort();
			});
			ws.on('error', (error) => logger.warn('socket_error', { error }));

			ws.on('message', (data, isBinary) => {
				const parsed = parseClientMessage(isBinary ? '' : data.toString('utf8'), limits);
				if (!parsed.ok) return sendError(parsed.code, parsed.message);
				const message = parsed.message;
				if (message.action === 'cancel') {
					if (!job) return sendError('NO_JOB', 'There is no job to cancel.');
					job.abort();
					return;
				}
				if (job) return sendError('JOB_IN_PROGRESS', 'This connection already has a job; cancel it or wait for done.');
				if (!rateLimiter.take(address)) {
					metrics.countJob('busy');
					return sendError('RATE_LIMITED', 'Too many questions from this address; try again in a minute.');
				}
				const question: Question =
					message.action === 'generate'
						? { mode: 'ids', question: message.question, chunkIds: message.chunk_ids, kbVersion: message.kb_version }
						: { mode: 'query', question: message.question };
				const controller = new AbortController();
				job = controller;
				// The job is over for the client at its last frame, so a next question may follow at once.
				const jobSend = (frame: ServerMessage) => {
					if ((frame.type === 'done' || frame.type === 'error') && job === controller) job = undefined;
					send(frame);
				};
				runJob(question, controller.signal, jobSend)
					.catch((error: unknown) => {
						if (error instanceof QueueError) {
							if (error.code === 'BUSY') metrics.countJob('busy');
							if (error.code === 'QUEUE_TIMEOUT') metrics.countJob('timeout');
							if (error.code === 'BUSY' || error.code === 'QUEUE_TIMEOUT') return jobSend({ type: 'error', code: error.code, message: error.message });
							return sendDone(jobSend, 'cancelled');
						}
						if (controller.signal.aborted) return sendDone(jobSend, 'cancelled');
						metrics.countJob('error');
						logger.error('job_failed', { error });
						const unreachable = /unreachable|ECONNREFUSED|fetch failed|Failed to connect/i.test(String((error as Error)?.message));
						jobSend({
							type: 'error',
							code: unreachable ? 'UNAVAILABLE' : 'INTERNAL',
							message: unreachable ? 'The knowledge base is unavailable right now.' : 'The answer failed.',
						});
					})
					.finally(() => {
						if (job === controller) job = undefined;
					});
			});
		});

		const runJob = async (question: Question, signal: AbortSignal, send: (message: ServerMessage) => void) => {
			const outcome: AnswerOutcome = await queue.run(
				async (jobSignal) => {
					send({ type: 'running' });
					// An ingest may have changed the collection since the last job; its version decides which ids are valid.
					info = await knowledgeBase.info().catch(() => info);
					metrics.setQueueDepth(queue.size);
					return answerQuestion(question, {
						provider: provider!,
						knowledgeBase,
						kbVersion: info?.contentVersion ?? null,
						embedQuery,
						settings,
						send,
						signal: jobSignal,
					});
				},
				{
					signal,
					onQueued: (position, estimatedWaitMs) => {
						metrics.setQueueDepth(queue.size);
						send({ type: 'queued', position, ...(estimatedWaitMs === undefined ? {} : { estimated_wait_ms: Math.round(estimatedWaitMs) }) });
					},
				},
			);
			metrics.countJob(outcome.finish);
			metrics.addTokens(outcome.tokens);
			if (outcome.ttftMs !== null) metrics.observeTtft(outcome.ttftMs / 1000);
			if (outcome.tokens > 1 && outcome.durationMs > 0) metrics.observeTokensPerSecond(outcome.tokens / (outcome.durationMs / 1000));
			logger.info('job_done', { mode: outcome.mode, finish: outcome.finish, tokens: outcome.tokens, ttft_ms: outcome.ttftMs });
			// The client already has its done frame: a log that cannot be written is the operator's problem, not the visitor's.
			await qaLog
				?.write({
				time: new Date().toISOString(),
				question: question.question,
				chunk_ids: outcome.chunkIds,
				mode: outcome.mode,
				answer: outcome.answer,
				finish: outcome.finish,
				ttft_ms: outcome.ttftMs,
				tokens: outcome.tokens,
					duration_ms: Math.round(outcome.durationMs),
				})
				.catch((error: unknown) => logger.error('qa_log_failed', { error }));
		};

		server.listen(settings.port, settings.host);
		await once(server, 'listening');
		const { port } = server.address() as AddressInfo;
		const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
		logger.info('listening', { address: `http://${host}:${port}`, path: CONCIERGE_PATH, kb_version: info?.contentVersion ?? null });

		let closing: Promise<void> | undefined;
		return {
			address: `http://${host}:${port}`,
			port,
			close: () =>
				(closing ??= (async () => {
					server.close();
					for (const ws of wss.clients) ws.close(CLOSE_CODES.GOING_AWAY, 'server shutting down');
					await closeAll();
					for (const ws of wss.clients) ws.terminate();
					server.closeAllConnections();
					logger.info('closed');
				})()),
		};
	} catch (error) {
		await closeAll();
		throw error;
	}
}

function sendDone(send: (message: ServerMessage) => void, finish: 'cancelled') {
	send({ type: 'done', finish, stats: { ttft_ms: null, tokens: 0, tokens_per_s: null } });
}

/** The request's path, or '' for a request target that is not a valid path. */
function requestPath(request: IncomingMessage): string {
	try {
		return new URL(request.url ?? '/', 'http://localhost').pathname;
	} catch {
		return '';
	}
}

function refuse(socket: Duplex, status: number, text: string) {
	socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

// Without an allowlist, browsers may connect only from the sidecar's own origin; clients that send no Origin
// (not browsers, so no visitor's cookies or page are involved) are let in.
function originAllowed(request: IncomingMessage, origins: readonly string[]): boolean {
	const origin = request.headers.origin;
	if (!origin) return true;
	if (origins.includes(origin)) return true;
	if (origins.length > 0) return false;
	try {
		return new URL(origin).host === request.headers.host;
	} catch {
		return false;
	}
}

function clientAddress(request: IncomingMessage, trustProxy: boolean): string {
	const forwarded = request.headers['x-forwarded-for'];
	// The proxy appends the address it saw; entries before it are whatever the client claimed.
	if (trustProxy && typeof forwarded === 'string' && forwarded.trim()) return forwarded.split(',').at(-1)!.trim();
	return request.socket.remoteAddress ?? 'unknown';
}

function isLoopback(address: string | undefined): boolean {
	return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1' || !!address?.startsWith('127.');
}

function definedOnly<T extends object>(value: T): Partial<T> {
	return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
