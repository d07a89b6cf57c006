/** Why a job given to a {@link JobQueue} was turned away or never ran to its end. */
export type QueueErrorCode = 'BUSY' | 'QUEUE_TIMEOUT' | 'CANCELLED' | 'CLOSED';

const messages: Record<QueueErrorCode, string> = {
	BUSY: 'The queue is full',
	QUEUE_TIMEOUT: 'The job waited too long for its turn',
	CANCELLED: 'The job was cancelled while it waited',
	CLOSED: 'The queue is closed',
};

/** The rejection of {@link JobQueue.run} when the queue itself, not the task, ends a job. */
export class QueueError extends Error {
	code: QueueErrorCode;
	constructor(code: QueueErrorCode, message = messages[code]) {
		super(message);
		this.name = 'QueueError';
		this.code = code;
	}
}

/** Options of {@link createJobQueue}. */
export interface JobQueueOptions {
	/** Most jobs waiting at once, not counting the running one; one more is rejected with `BUSY`. */
	maxQueued: number;
	/** Longest a job waits for its turn before it is rejected with `QUEUE_TIMEOUT`; `Infinity` waits for ever. */
	timeoutMs: number;
	/** Clock for job durations and wait estimates, in milliseconds. */
	now?: () => number;
}

/** Options of one {@link JobQueue.run} call. */
export interface RunOptions {
	/** Cancels the job: taken out of the queue while waiting, passed on to the task's signal while running. */
	signal?: AbortSignal;
	/**
	 * Called when the job has to wait, with its 1-based place in the line, and again whenever that place
	 * changes (it only ever moves forward). The estimate is undefined until a job has completed.
	 * Not called for a job that starts at once.
	 */
	onQueued?: (position: number, estimatedWaitMs: number | undefined) => void;
	/** Called just before the task starts. */
	onStart?: () => void;
}

/** Runs tasks one at a time, first come first served, with a bounded waiting line. */
export interface JobQueue {
	/**
	 * Runs `task` once every job before it has settled and resolves or rejects as the task does.
	 * The task should stop soon after its signal aborts; the next job waits until it has settled.
	 * A callback that throws fails its own job only, with that error.
	 */
	run<T>(task: (signal: AbortSignal) => Promise<T>, options?: RunOptions): Promise<T>;
	/** Jobs waiting, not counting the running one. */
	readonly size: number;
	/** Whether a task is running. */
	readonly running: boolean;
	/**
	 * Rejects every waiting job and every later one with `CLOSED`, aborts the running task's signal,
	 * and resolves once that task has settled.
	 */
	close(): Promise<void>;
}

interface Waiter {
	/** Last place announced to the caller; 0 before the first. */
	position: number;
	begin(): void;
	fail(error: unknown): void;
	/** Announces a place; false when the callback threw and the job has failed. */
	announce(position: number): boolean;
}

interface Current {
	controller: AbortController;
	startedAt: number;
	settled: Promise<void>;
}

// Few enough that the estimate follows a change of model or load, enough to smooth one odd question.
const recentJobs = 8;

/**
 * Creates a {@link JobQueue}: the sidecar has one model, so questions take turns, and visitors
 * are told their place in the line and roughly how long they will wait.
 */
export function createJobQueue(options: JobQueueOptions): JobQueue {
	const { maxQueued, timeoutMs } = options;
	const now = options.now ?? (() => performance.now());
	if (!(maxQueued >= 0)) throw new RangeError(`maxQueued must be 0 or more, not ${maxQueued}`);
	if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be 0 or more, not ${timeoutMs}`);

	const waiting: Waiter[] = [];
	const durations: number[] = [];
	let current: Current | undefined;
	let closed = false;

	function averageDuration(): number | undefined {
		if (durations.length === 0) return undefined;
		return durations.reduce((sum, duration) => sum + duration, 0) / durations.length;
	}

	function estimate(position: number): number | undefined {
		const average = averageDuration();
		if (average === undefined) return undefined;
		const remaining = current ? Math.max(0, average - (now() - current.startedAt)) : 0;
		return Math.round(remaining + average * (position - 1));
	}

	function remove(waiter: Waiter): void {
		const index = waiting.indexOf(waiter);
		if (index >= 0) waiting.splice(index, 1);
	}

	function announceAll(): void {
		for (let index = 0; index < waiting.length; index++) {
			const waiter = waiting[index]!;
			const position = index + 1;
			if (waiter.position === position) continue;
			// A failed waiter has left the line, so the next one now sits at this index.
			if (!waiter.announce(position)) index--;
		}
	}

	function pump(): void {
		while (!current && !closed) {
			const next = waiting.shift();
			if (!next) break;
			next.begin();
		}
		announceAll();
	}

	function run<T>(task: (signal: AbortSignal) => Promise<T>, runOptions: RunOptions = {}): Promise<T> {
		const { signal, onQueued, onStart } = runOptions;
		if (closed) return Promise.reject(new QueueError('CLOSED'));
		if (signal?.aborted) return Promise.reject(new QueueError('CANCELLED'));
		if (current && waiting.length >= maxQueued) return Promise.reject(new QueueError('BUSY'));

		return new Promise<T>((resolve, reject) => {
			let state: 'waiting' | 'running' | 'done' = 'waiting';
			let timer: ReturnType<typeof setTimeout> | undefined;
			let controller: AbortController | undefined;

			const finish = (): void => {
				state = 'done';
				if (timer !== undefined) clearTimeout(timer);
				signal?.removeEventListener('abort', onAbort);
			};

			const onAbort = (): void => {
				if (state === 'waiting') {
					waiter.fail(new QueueError('CANCELLED'));
					announceAll();
				} else if (state === 'running') {
					controller?.abort(signal?.reason);
				}
			};

			const waiter: Waiter = {
				position: 0,
				fail(error) {
					if (state !== 'waiting') return;
					remove(waiter);
					finish();
					reject(error);
				},
				announce(position) {
					waiter.position = position;
					try {
						onQueued?.(position, estimate(position));
						return true;
					} catch (error) {
						waiter.fail(error);
						return false;
					}
				},
				begin() {
					if (state !== 'waiting') return;
					state = 'running';
					if (timer !== undefined) clearTimeout(timer);
					controller = new AbortController();
					let settle!: () => void;
					const job: Current = {
						controller,
						startedAt: now(),
						settled: new Promise<void>((done) => (settle = done)),
					};
					current = job;
					let result: Promise<T>;
					try {
						onStart?.();
						result = Promise.resolve(task(controller.signal));
					} catch (error) {
						result = Promise.reject(error);
					}
					result
						.then(
							(value) => {
								// A job cut short says little about how long a whole answer takes.
								if (!job.controller.signal.aborted) {
									durations.push(now() - job.startedAt);
									if (durations.length > recentJobs) durations.shift();
								}
								return { ok: true as const, value };
							},
							(error: unknown) => ({ ok: false as const, error }),
						)
						.then((outcome) => {
							finish();
							current = undefined;
							settle();
							if (outcome.ok) resolve(outcome.value);
							else reject(outcome.error);
							pump();
						});
				},
			};

			signal?.addEventListener('abort', onAbort, { once: true });
			if (!current) {
				waiter.begin();
				return;
			}
			waiting.push(waiter);
			if (Number.isFinite(timeoutMs)) {
				timer = setTimeout(() => {
					waiter.fail(new QueueError('QUEUE_TIMEOUT'));
					announceAll();
				}, timeoutMs);
			}
			waiter.announce(waiting.length);
		});
	}

	return {
		run,
		get size() {
			return waiting.length;
		},
		get running() {
			return current !== undefined;
		},
		async close() {
			closed = true;
			for (const waiter of waiting.slice()) waiter.fail(new QueueError('CLOSED'));
			if (!current) return;
			current.controller.abort(new QueueError('CLOSED'));
			await current.settled;
		},
	};
}
