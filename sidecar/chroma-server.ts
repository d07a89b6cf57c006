import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';

/** Options of {@link startChromaServer}. */
export interface ChromaServerOptions {
	/** Folder where Chroma keeps its data; created when missing. */
	path: string;
	/** Port to listen on; 0 picks a free one. */
	port?: number;
	/** Interface to listen on. */
	host?: string;
	/**
	 * Command put before `node cli.mjs run …`, e.g. a loader for a newer C library.
	 * Defaults to the environment variable `CONCIERGE_CHROMA_PREFIX`.
	 */
	prefix?: string | undefined;
	/** How long to wait for the server to answer its heartbeat. */
	startTimeoutMs?: number;
	/** Lines of the server's output to keep for error messages. */
	logLines?: number;
}

/** A running Chroma server started by {@link startChromaServer}. */
export interface ChromaServer {
	/** Base URL, e.g. `http://127.0.0.1:8000`. */
	url: string;
	host: string;
	port: number;
	/** Stops the server; resolves once the process has exited. */
	close(): Promise<void>;
}

// Chroma's bundled server ignores SIGTERM and SIGINT (and then spins a core), so a short grace is all it gets.
const killGraceMs = 500;
const running = new Set<ChildProcess>();

// A test run or a sidecar that dies must not leave a server spinning a core behind it. 'exit' does not run
// when a signal ends the process, so the signals that usually do are watched too, without changing what they do:
// when nothing else handles the signal, it is raised again once the servers are killed.
const killAll = () => {
	for (const child of running) child.kill('SIGKILL');
};
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
	process.once(signal, () => {
		killAll();
		if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
	});
}

/**
 * Starts Chroma's own server (the one bundled with the `chromadb` package) as a child process
 * and resolves once it answers its heartbeat.
 */
export async function startChromaServer(options: ChromaServerOptions): Promise<ChromaServer> {
	const host = options.host ?? '127.0.0.1';
	const prefix = options.prefix ?? (process.env.CONCIERGE_CHROMA_PREFIX || undefined);
	const dataPath = resolve(options.path);
	await mkdir(dataPath, { recursive: true });
	// Chroma accepts --port 0 but then reports port 0, so the free port is found here; a port taken
	// in between makes the start fail and is retried with another.
	const attempts = options.port ? 1 : 3;
	let lastError: unknown;
	for (let attempt = 0; attempt < attempts; attempt++) {
		const port = options.port || (await findFreePort(host));
		try {
			return await launch({ ...options, host, port, prefix, path: dataPath });
		} catch (error) {
			lastError = error;
			if (!(error instanceof ChromaStartError) || !error.portTaken) break;
		}
	}
	throw lastError;
}

class ChromaStartError extends Error {
	portTaken: boolean;
	constructor(message: string, portTaken: boolean) {
		super(message);
		this.name = 'ChromaStartError';
		this.portTaken = portTaken;
	}
}

async function launch(options: ChromaServerOptions & { host: string; port: number }): Promise<ChromaServer> {
	const { host, port, prefix } = options;
	const cli = chromaCliPath();
	const command = [process.execPath, cli, 'run', '--path', options.path, '--host', host, '--port', String(port)];
	if (prefix) command.unshift(prefix);
	const [file, ...args] = command as [string, ...string[]];
	const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
	running.add(child);
	const output: string[] = [];
	const keep = options.logLines ?? 40;
	const collect = (data: Buffer) => {
		for (const line of data.toString('utf8').split('\n')) {
			if (line.trim()) output.push(line.replace(/\x1b\[[0-9;]*m/g, ''));
		}
		output.splice(0, Math.max(0, output.length - keep));
	};
	child.stdout!.on('data', collect);
	child.stderr!.on('data', collect);

	let failure: Error | undefined;
	// A command that cannot be spawned emits 'error' and never 'exit'.
	const exited = new Promise<void>((done) => {
		child.once('exit', () => done());
		child.once('error', (error) => {
			failure = error;
			done();
		});
	}).then(() => {
		running.delete(child);
	});

	const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
	const close = async () => {
		if (child.exitCode === null && child.signalCode === null && !failure) {
			child.kill('SIGTERM');
			const timer = setTimeout(() => child.kill('SIGKILL'), killGraceMs);
			await exited;
			clearTimeout(timer);
		}
	};

	const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
	while (!failure) {
		if (child.exitCode !== null || child.signalCode !== null) break;
		if (await heartbeat(url)) return { url, host, port, close };
		if (Date.now() > deadline) {
			await close();
			throw new ChromaStartError(
				`Chroma's server did not answer at ${url} within ${options.startTimeoutMs ?? 60_000} ms.\n${output.join('\n')}`,
				false,
			);
		}
		await new Promise((done) => setTimeout(done, 200));
	}
	await close();
	const log = output.join('\n');
	if (failure) {
		throw new ChromaStartError(`Could not start Chroma's server (${file}): ${failure.message}`, false);
	}
	const hint = /GLIBC_2\.\d+' not found/.test(log)
		? "\nThis system's C library is too old for Chroma's bundled server. Run Chroma elsewhere and pass its URL, " +
			'or set CONCIERGE_CHROMA_PREFIX to a command that runs programs under a newer glibc (see the README).'
		: '';
	throw new ChromaStartError(
		`Chroma's server exited with code ${child.exitCode ?? child.signalCode} before it was ready (data folder ${options.path}).\n${log}${hint}`,
		/address already in use|AddrInUse/i.test(log),
	);
}

async function heartbeat(url: string): Promise<boolean> {
	try {
		const response = await fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(1000) });
		return response.ok;
	} catch {
		return false;
	}
}

function chromaCliPath(): string {
	const require = createRequire(import.meta.url);
	// The package exports only its entry points, so its folder is found from the main file.
	const entry = require.resolve('chromadb');
	let dir = dirname(entry);
	while (basename(dir) !== 'chromadb' && dirname(dir) !== dir) dir = dirname(dir);
	return join(dir, 'dist', 'cli.mjs');
}

async function findFreePort(host: string): Promise<number> {
	const server = createServer();
	server.listen(0, host);
	await once(server, 'listening');
	const address = server.address();
	server.close();
	await once(server, 'close');
	if (!address || typeof address === 'string') throw new Error(`Could not find a free port on ${host}`);
	return address.port;
}
