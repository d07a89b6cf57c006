import { appendFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * One answered (or unanswered) question, as given to {@link QaLog.write}; the names are those of
 * the file's JSON lines.
 */
export interface QaEntry {
	/** When it was asked, ISO 8601; defaults to the moment of the write call. */
	time?: string;
	question: string;
	/** Ids of the chunks the answer was given from, in prompt order. */
	chunk_ids: readonly string[];
	mode: string;
	answer: string;
	/** How generation ended, e.g. `stop`, `length`, `cancelled`. */
	finish: string;
	/** Milliseconds to the first token; null when none came. */
	ttft_ms: number | null;
	tokens: number;
	duration_ms: number;
}

/** Options of {@link createQaLog}. */
export interface QaLogOptions {
	/** The JSON lines file, e.g. `qa.jsonl`; its folder is created when missing. */
	path: string;
	/** Size the file may reach before it is rotated; defaults to 10 MiB. */
	maxBytes?: number;
	/** Rotated files kept (`qa.jsonl.1` is the newest); defaults to 3. */
	keep?: number;
	/** Wall clock in milliseconds since the epoch, for entries without a time. */
	now?: () => number;
}

/** An append-only, size-rotated log of questions and answers made by {@link createQaLog}. */
export interface QaLog {
	/** Appends one line; resolves once it is in the file. */
	write(entry: QaEntry): Promise<void>;
	/** Waits for pending writes; later writes are rejected. */
	close(): Promise<void>;
}

/**
 * Creates a {@link QaLog}: what visitors asked and what they were told, one JSON object per line,
 * for improving the site. Only the fields of {@link QaEntry} are written, so a caller's extra
 * fields (a client address above all) never reach the disk.
 */
export function createQaLog(options: QaLogOptions): QaLog {
	const { path } = options;
	const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
	const keep = options.keep ?? 3;
	const now = options.now ?? Date.now;
	if (!(maxBytes > 0)) throw new RangeError(`maxBytes must be more than 0, not ${maxBytes}`);
	if (!(keep >= 0) || !Number.isInteger(keep)) throw new RangeError(`keep must be a whole number, 0 or more, not ${keep}`);

	// Unknown until the first write, and again after a failed one, when the file may hold part of a line.
	let size: number | undefined;
	let queue: Promise<void> = Promise.resolve();
	let closed = false;

	async function currentSize(): Promise<number> {
		try {
			return (await stat(path)).size;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
			throw error;
		}
	}

	async function moveIfPresent(from: string, to: string): Promise<void> {
		try {
			await rename(from, to);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
		}
	}

	async function rotate(): Promise<void> {
		await rm(`${path}.${keep}`, { force: true });
		for (let index = keep - 1; index >= 1; index--) await moveIfPresent(`${path}.${index}`, `${path}.${index + 1}`);
		if (keep > 0) await moveIfPresent(path, `${path}.1`);
		else await rm(path, { force: true });
	}

	async function append(line: string): Promise<void> {
		const bytes = Buffer.byteLength(line);
		try {
			if (size === undefined) {
				await mkdir(dirname(path), { recursive: true });
				size = await currentSize();
			}
			// An empty file is never rotated, so a line longer than maxBytes still gets written.
			if (size > 0 && size + bytes > maxBytes) {
				await rotate();
				size = 0;
			}
			// Questions are visitors' words: readable by the service's user only.
			await appendFile(path, line, { mode: 0o600 });
			size += bytes;
		} catch (error) {
			size = undefined;
			throw error;
		}
	}

	return {
		write(entry) {
			if (closed) return Promise.reject(new Error(`The Q&A log ${path} is closed`));
			// Stamped and serialized now, so the line says when it was asked, not when the disk got to it.
			const line = `${JSON.stringify({
				time: entry.time ?? new Date(now()).toISOString(),
				question: entry.question,
				chunk_ids: [...entry.chunk_ids],
				mode: entry.mode,
				answer: entry.answer,
				finish: entry.finish,
				ttft_ms: entry.ttft_ms ?? null,
				tokens: entry.tokens,
				duration_ms: entry.duration_ms,
			})}\n`;
			const written = queue.then(() => append(line));
			// One failed write must not fail every later one.
			queue = written.catch(() => {});
			return written;
		},
		async close() {
			closed = true;
			await queue;
		},
	};
}
