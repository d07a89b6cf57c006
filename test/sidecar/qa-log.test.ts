import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createQaLog, type QaEntry } from '../../sidecar/qa-log.ts';

function entry(question: string, overrides: Partial<QaEntry> = {}): QaEntry {
	return {
		question,
		chunk_ids: ['/posts/a/#0', '/posts/b/#2'],
		mode: 'answer',
		answer: `An answer to ${question}`,
		finish: 'stop',
		ttft_ms: 850,
		tokens: 42,
		duration_ms: 4200,
		...overrides,
	};
}

async function readLines(path: string): Promise<Record<string, unknown>[]> {
	const text = await readFile(path, 'utf8');
	assert.ok(text.endsWith('\n'));
	return text
		.slice(0, -1)
		.split('\n')
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('createQaLog', () => {
	let dir: string;

	beforeEach(async () => {
		dir = await mkdtemp(join(tmpdir(), 'concierge-qa-log-'));
	});

	afterEach(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	test('appends one JSON line per entry with exactly the documented fields, stamped with the time unless given', async () => {
		const path = join(dir, 'logs', 'qa.jsonl');
		const log = createQaLog({ path, now: () => Date.UTC(2025, 0, 2, 3, 4, 5) });
		await log.write(entry('How do I deploy?'));
		await log.write(entry('Is there RSS?', { ttft_ms: null, finish: 'no_context', chunk_ids: [] }));
		await log.write(entry('Asked earlier', { time: '2025-01-02T03:00:00.000Z' }));
		await log.close();
		assert.deepEqual(await readLines(path), [
			{
				time: '2025-01-02T03:04:05.000Z',
				question: 'How do I deploy?',
				chunk_ids: ['/posts/a/#0', '/posts/b/#2'],
				mode: 'answer',
				answer: 'An answer to How do I deploy?',
				finish: 'stop',
				ttft_ms: 850,
				tokens: 42,
				duration_ms: 4200,
			},
			{
				time: '2025-01-02T03:04:05.000Z',
				question: 'Is there RSS?',
				chunk_ids: [],
				mode: 'answer',
				answer: 'An answer to Is there RSS?',
				finish: 'no_context',
				ttft_ms: null,
				tokens: 42,
				duration_ms: 4200,
			},
			{
				time: '2025-01-02T03:00:00.000Z',
				question: 'Asked earlier',
				chunk_ids: ['/posts/a/#0', '/posts/b/#2'],
				mode: 'answer',
				answer: 'An answer to Asked earlier',
				finish: 'stop',
				ttft_ms: 850,
				tokens: 42,
				duration_ms: 4200,
			},
		]);
	});

	test('never writes a field the entry type does not have, such as a client address', async () => {
		const path = join(dir, 'qa.jsonl');
		const log = createQaLog({ path });
		const withAddress = { ...entry('Where are you?'), address: '203.0.113.7', ip: '203.0.113.7' };
		await log.write(withAddress);
		await log.close();
		const text = await readFile(path, 'utf8');
		assert.ok(!text.includes('203.0.113.7'));
	});

	test('keeps the file readable by its owner only', async (t) => {
		if (process.platform === 'win32') return t.skip('no POSIX modes');
		const path = join(dir, 'qa.jsonl');
		const log = createQaLog({ path });
		await log.write(entry('Private?'));
		await log.close();
		assert.equal((await stat(path)).mode & 0o777, 0o600);
	});

	test('rotates before a write that would pass maxBytes, keeping the newest files', async () => {
		const path = join(dir, 'qa.jsonl');
		const probe = createQaLog({ path: join(dir, 'probe', 'qa.jsonl') });
		await probe.write(entry('q0'));
		await probe.close();
		const lineBytes = (await stat(join(dir, 'probe', 'qa.jsonl'))).size;
		await rm(join(dir, 'probe'), { recursive: true });

		// Two lines fit a file, a third would not.
		const maxBytes = Math.floor(lineBytes * 2.5);
		const log = createQaLog({ path, maxBytes, keep: 2 });
		for (const question of ['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7']) {
			await log.write(entry(question));
			assert.ok((await stat(path)).size <= maxBytes);
		}
		await log.close();

		assert.deepEqual((await readdir(dir)).toSorted(), ['qa.jsonl', 'qa.jsonl.1', 'qa.jsonl.2']);
		const questionsIn = async (file: string) => (await readLines(join(dir, file))).map((line) => line.question);
		assert.deepEqual(await questionsIn('qa.jsonl'), ['q7']);
		assert.deepEqual(await questionsIn('qa.jsonl.1'), ['q5', 'q6']);
		assert.deepEqual(await questionsIn('qa.jsonl.2'), ['q3', 'q4']);
	});

	test('continues the size count of a file left by an earlier run', async () => {
		const path = join(dir, 'qa.jsonl');
		const first = createQaLog({ path });
		await first.write(entry('before restart'));
		await first.close();
		const second = createQaLog({ path, maxBytes: (await stat(path)).size + 1 });
		await second.write(entry('after restart'));
		await second.close();
		assert.deepEqual(
			(await readLines(`${path}.1`)).map((line) => line.question),
			['before restart'],
		);
	});

	test('writes a line longer than maxBytes into a file of its own', async () => {
		const path = join(dir, 'qa.jsonl');
		const log = createQaLog({ path, maxBytes: 10 });
		await log.write(entry('long one'));
		await log.write(entry('another long one'));
		await log.close();
		assert.deepEqual((await readLines(path)).map((line) => line.question), ['another long one']);
		assert.deepEqual((await readLines(`${path}.1`)).map((line) => line.question), ['long one']);
	});

	test('drops the old lines when keep is 0', async () => {
		const path = join(dir, 'qa.jsonl');
		const log = createQaLog({ path, maxBytes: 10, keep: 0 });
		await log.write(entry('first'));
		await log.write(entry('second'));
		await log.close();
		assert.deepEqual(await readdir(dir), ['qa.jsonl']);
		assert.deepEqual((await readLines(path)).map((line) => line.question), ['second']);
	});

	test('never interleaves concurrent writes and keeps their order', async () => {
		const path = join(dir, 'qa.jsonl');
		const log = createQaLog({ path, maxBytes: 3000, keep: 50 });
		const questions = Array.from({ length: 60 }, (_, index) => `question ${index} ${'x'.repeat(index * 10)}`);
		await Promise.all(questions.map((question) => log.write(entry(question))));
		await log.close();
		const files = (await readdir(dir)).filter((file) => file !== 'qa.jsonl');
		const rotated = files.map((file) => Number(file.split('.').at(-1))).toSorted((a, b) => b - a);
		const all: unknown[] = [];
		for (const index of rotated) all.push(...(await readLines(`${path}.${index}`)).map((line) => line.question));
		all.push(...(await readLines(path)).map((line) => line.question));
		assert.deepEqual(all, questions);
	});

	test('rejects a write after close but keeps the lines written before', async () => {
		const path = join(dir, 'qa.jsonl');
		const log = createQaLog({ path });
		const pending = log.write(entry('just in time'));
		await log.close();
		await pending;
		await assert.rejects(log.write(entry('too late')), /closed/);
		assert.deepEqual((await readLines(path)).map((line) => line.question), ['just in time']);
	});

	test('keeps writing after a write fails', async () => {
		const blocker = join(dir, 'not-a-folder');
		const log = createQaLog({ path: join(blocker, 'qa.jsonl') });
		await writeFile(blocker, '');
		await assert.rejects(log.write(entry('fails')));
		await rm(blocker);
		await log.write(entry('works'));
		await log.close();
		assert.deepEqual((await readLines(join(blocker, 'qa.jsonl'))).map((line) => line.question), ['works']);
	});
});
