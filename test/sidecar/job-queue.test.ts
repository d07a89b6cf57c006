import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { createJobQueue, QueueError, type JobQueue } from '../../sidecar/job-queue.ts';

/** A task that runs until the test finishes or fails it. */
interface Controlled<T> {
	task: (signal: AbortSignal) => Promise<T>;
	started: boolean;
	signal: AbortSignal | undefined;
	finish(value: T): void;
	fail(error: unknown): void;
}

function controlled<T = string>(): Controlled<T> {
	const { promise, resolve, reject } = Promise.withResolvers<T>();
	const handle: Controlled<T> = {
		task: (signal) => {
			handle.started = true;
			handle.signal = signal;
			return promise;
		},
		started: false,
		signal: undefined,
		finish: resolve,
		fail: reject,
	};
	return handle;
}

function settled(): Promise<void> {
	return new Promise((resolve) => setImmediate(resolve));
}

function queueError(code: string) {
	return (error: unknown) => error instanceof QueueError && error.code === code;
}

function newQueue(options: Partial<Parameters<typeof createJobQueue>[0]> = {}): JobQueue {
	return createJobQueue({ maxQueued: 10, timeoutMs: Infinity, now: () => 0, ...options });
}

describe('createJobQueue', () => {
	test('runs one job at a time, first come first served', async () => {
		const queue = newQueue();
		const order: string[] = [];
		const jobs = ['a', 'b', 'c'].map((name) => {
			const job = controlled();
			const result = queue.run(async (signal) => {
				order.push(`start ${name}`);
				const value = await job.task(signal);
				order.push(`end ${name}`);
				return value;
			});
			return { job, result };
		});
		assert.equal(queue.running, true);
		assert.equal(queue.size, 2);
		for (const [index, { job }] of jobs.entries()) job.finish(`answer ${index}`);
		assert.deepEqual(await Promise.all(jobs.map(({ result }) => result)), ['answer 0', 'answer 1', 'answer 2']);
		assert.deepEqual(order, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
		assert.equal(queue.running, false);
		assert.equal(queue.size, 0);
	});

	test('starts a job at once without a place in line when the queue is idle', async () => {
		const queue = newQueue();
		const calls: string[] = [];
		const result = await queue.run(async () => 'done', {
			onQueued: () => calls.push('queued'),
			onStart: () => calls.push('start'),
		});
		assert.equal(result, 'done');
		assert.deepEqual(calls, ['start']);
	});

	test('tells a waiting job its place as soon as it changes and never a later one', async () => {
		const queue = newQueue();
		const places = new Map<string, number[]>();
		const tasks = new Map<string, Controlled<string>>();
		const results = new Map<string, Promise<string>>();
		const cancelC = new AbortController();
		for (const name of ['a', 'b', 'c', 'd', 'e']) {
			const job = controlled();
			tasks.set(name, job);
			places.set(name, []);
			const result = queue.run(job.task, {
				signal: name === 'c' ? cancelC.signal : undefined,
				onQueued: (position) => places.get(name)!.push(position),
			});
			results.set(name, result);
			result.catch(() => {});
		}
		assert.deepEqual([...places.values()], [[], [1], [2], [3], [4]]);

		cancelC.abort();
		assert.deepEqual(places.get('d'), [3, 2], 'moves up the moment a job ahead leaves');
		assert.deepEqual(places.get('e'), [4, 3]);
		assert.deepEqual(places.get('b'), [1], 'a job ahead of the one that left keeps its place');

		tasks.get('a')!.finish('a');
		await results.get('a');
		assert.equal(tasks.get('b')!.started, true);
		assert.deepEqual(places.get('d'), [3, 2, 1]);
		assert.deepEqual(places.get('e'), [4, 3, 2]);
		for (const name of ['b', 'd', 'e']) tasks.get(name)!.finish(name);
		await Promise.all(['b', 'd', 'e'].map((name) => results.get(name)));
		assert.deepEqual(places.get('e'), [4, 3, 2, 1]);
	});

	test('estimates no wait before any job has completed', async () => {
		const queue = newQueue();
		const estimates: (number | undefined)[] = [];
		const first = controlled();
		const running = queue.run(first.task);
		const waiting = queue.run(async () => 'second', { onQueued: (_position, wait) => estimates.push(wait) });
		assert.deepEqual(estimates, [undefined]);
		first.finish('first');
		await Promise.all([running, waiting]);
	});

	test('estimates the wait from recent job durations, the jobs ahead and the running job’s remaining time', async () => {
		let clock = 0;
		const queue = newQueue({ now: () => clock });
		const first = controlled();
		const firstDone = queue.run(first.task);
		clock = 100;
		first.finish('first');
		await firstDone;

		const second = controlled();
		const secondDone = queue.run(second.task);
		clock = 130;
		const estimates = new Map<string, (number | undefined)[]>([
			['c', []],
			['d', []],
		]);
		const third = controlled();
		const thirdDone = queue.run(third.task, { onQueued: (_position, wait) => estimates.get('c')!.push(wait) });
		const fourthDone = queue.run(async () => 'fourth', { onQueued: (_position, wait) => estimates.get('d')!.push(wait) });
		assert.deepEqual(estimates.get('c'), [70], '100 ms average, 30 ms of the running job gone');
		assert.deepEqual(estimates.get('d'), [170]);

		clock = 300;
		second.finish('second');
		await secondDone;
		// Durations 100 and 200 average 150, and the third job has only just started.
		assert.deepEqual(estimates.get('d'), [170, 150]);
		third.finish('third');
		await Promise.all([thirdDone, fourthDone]);
	});

	test('turns a job away as busy when maxQueued jobs already wait', async () => {
		const queue = newQueue({ maxQueued: 2 });
		const first = controlled();
		const jobs = [queue.run(first.task), queue.run(async () => 'b'), queue.run(async () => 'c')];
		const onQueued = mock.fn();
		await assert.rejects(queue.run(async () => 'd', { onQueued }), queueError('BUSY'));
		assert.equal(onQueued.mock.callCount(), 0);
		assert.equal(queue.size, 2);
		first.finish('a');
		assert.deepEqual(await Promise.all(jobs), ['a', 'b', 'c']);
	});

	test('runs a job at once even when maxQueued is 0 but turns away a second one', async () => {
		const queue = newQueue({ maxQueued: 0 });
		const first = controlled();
		const running = queue.run(first.task);
		await assert.rejects(queue.run(async () => 'b'), queueError('BUSY'));
		first.finish('a');
		assert.equal(await running, 'a');
	});

	test('rejects a job that waits longer than timeoutMs and moves the jobs behind it up', async (t) => {
		t.mock.timers.enable({ apis: ['setTimeout'] });
		const queue = newQueue({ timeoutMs: 1000 });
		const first = controlled();
		const running = queue.run(first.task);
		t.mock.timers.tick(500);
		const late = queue.run(async () => 'late');
		const laterPlaces: number[] = [];
		t.mock.timers.tick(400);
		const later = queue.run(async () => 'later', { onQueued: (position) => laterPlaces.push(position) });

		t.mock.timers.tick(600);
		await assert.rejects(late, queueError('QUEUE_TIMEOUT'));
		assert.deepEqual(laterPlaces, [2, 1]);
		assert.equal(queue.size, 1);

		first.finish('first');
		assert.equal(await running, 'first');
		assert.equal(await later, 'later', 'a job that started in time is not timed out');
		t.mock.timers.tick(5000);
	});

	test('takes a job out of the line at once when its caller cancels it while it waits', async () => {
		const queue = newQueue();
		const first = controlled();
		const running = queue.run(first.task);
		const cancel = new AbortController();
		const waitingTask = mock.fn(async () => 'never');
		const waiting = queue.run(waitingTask, { signal: cancel.signal });
		assert.equal(queue.size, 1);
		cancel.abort();
		assert.equal(queue.size, 0);
		await assert.rejects(waiting, queueError('CANCELLED'));
		first.finish('first');
		await running;
		assert.equal(waitingTask.mock.callCount(), 0);
	});

	test('rejects a job whose signal has already aborted', async () => {
		const queue = newQueue();
		await assert.rejects(queue.run(async () => 'never', { signal: AbortSignal.abort() }), queueError('CANCELLED'));
		assert.equal(queue.running, false);
	});

	test('aborts the running task’s signal when its caller cancels and then starts the next job', async () => {
		const queue = newQueue();
		const cancel = new AbortController();
		const first = controlled();
		const running = queue.run(first.task, { signal: cancel.signal });
		const second = controlled();
		const next = queue.run(second.task);

		cancel.abort(new Error('visitor left'));
		assert.equal(first.signal?.aborted, true);
		assert.equal((first.signal?.reason as Error).message, 'visitor left');
		assert.equal(second.started, false, 'the model is still busy until the task has wound down');

		first.finish('partial answer');
		assert.equal(await running, 'partial answer', 'the task decides how it ends');
		assert.equal(second.started, true);
		second.finish('second');
		assert.equal(await next, 'second');
	});

	test('keeps going after a task throws or rejects', async () => {
		const queue = newQueue();
		const rejecting = queue.run(async () => {
			throw new Error('model failed');
		});
		const throwing = queue.run((() => {
			throw new Error('thrown before any promise');
		}) as () => Promise<string>);
		const next = queue.run(async () => 'still answering');
		await assert.rejects(rejecting, /model failed/);
		await assert.rejects(throwing, /thrown before any promise/);
		assert.equal(await next, 'still answering');
		assert.equal(queue.running, false);
	});

	test('fails only its own job when a callback throws', async () => {
		const queue = newQueue();
		const first = controlled();
		const running = queue.run(first.task);
		const badQueued = queue.run(async () => 'never', {
			onQueued: () => {
				throw new Error('socket closed');
			},
		});
		const badStart = queue.run(async () => 'never', {
			onStart: () => {
				throw new Error('socket closed on start');
			},
		});
		const good = queue.run(async () => 'good');
		await assert.rejects(badQueued, /socket closed/);
		assert.equal(queue.size, 2);
		first.finish('first');
		await assert.rejects(badStart, /socket closed on start/);
		assert.equal(await good, 'good');
		await running;
	});

	test('close rejects the waiting jobs, aborts the running task and resolves once it has settled', async () => {
		const queue = newQueue();
		const first = controlled();
		const running = queue.run(first.task);
		const waiting = [queue.run(async () => 'b'), queue.run(async () => 'c')];
		let closed = false;
		const closing = queue.close().then(() => (closed = true));

		for (const job of waiting) await assert.rejects(job, queueError('CLOSED'));
		assert.equal(queue.size, 0);
		assert.equal(first.signal?.aborted, true);
		assert.ok(first.signal?.reason instanceof QueueError && first.signal.reason.code === 'CLOSED');
		await settled();
		assert.equal(closed, false, 'the running task has not settled yet');

		first.fail(new Error('aborted'));
		await assert.rejects(running, /aborted/);
		await closing;
		assert.equal(queue.running, false);
		await assert.rejects(queue.run(async () => 'late'), queueError('CLOSED'));
	});

	test('close resolves at once when nothing runs', async () => {
		await newQueue().close();
	});
});
