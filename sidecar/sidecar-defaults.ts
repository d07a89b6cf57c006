import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * Every default of the sidecar in one place; the CLI's --help prints them from here.
 * Limits of the protocol itself (payload, question length, chunk ids) are in protocol.ts.
 */
export const SIDECAR_DEFAULTS = {
	port: 8787,
	host: '127.0.0.1',
	threads: physicalCores(),
	contextSize: 2048,
	collection: 'astro-concierge',
	origins: [] as string[],
	maxTokens: 512,
	temperature: 0.2,
	topK: 6,
	maxDistance: 0.2,
	/** Tokens kept free besides the answer for the chat template's own tokens. */
	margin: 200,
	minContextTokens: 64,
	flushChars: '。、\n',
	queueMax: 32,
	queueTimeoutMs: 120_000,
	rateLimit: 20,
	trustProxy: false,
	metricsPublic: false,
	qaLog: false as string | false,
	heartbeatMs: 30_000,
	/** Open sockets one client address may hold; a page needs one. */
	maxConnectionsPerAddress: 8,
	/** Bytes of unsent frames a socket may queue before the client is dropped as not reading. */
	maxBufferedBytes: 1024 * 1024,
};

/**
 * Physical cores, not hardware threads: llama.cpp gains nothing from hyper-threads and loses a great deal
 * when it asks for more threads than there are cores (node-llama-cpp's own default).
 */
function physicalCores(): number {
	try {
		const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
		const cores = new Set(
			cpuinfo
				.split('\n\n')
				.map((block) => `${/physical id\s*:\s*(\d+)/.exec(block)?.[1]}:${/core id\s*:\s*(\d+)/.exec(block)?.[1]}`)
				.filter((key) => !key.includes('undefined')),
		);
		if (cores.size > 0) return cores.size;
	} catch {
		// Not Linux: fall back to the logical count.
	}
	return Math.max(1, availableParallelism());
}
