import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createJsonLogger } from '../../sidecar/json-logger.ts';

function collect(): { stream: Writable; lines(): Record<string, unknown>[]; text(): string } {
	const chunks: string[] = [];
	const stream = new Writable({
		write(chunk: Buffer, _encoding, done) {
			chunks.push(chunk.toString());
			done();
		},
	});
	const text = () => chunks.join('');
	return {
		stream,
		text,
		lines: () => {
			assert.ok(text() === '' || text().endsWith('\n'), 'every line ends with a line feed');
			return text()
				.split('\n')
				.filter(Boolean)
				.map((line) => JSON.parse(line) as Record<string, unknown>);
		},
	};
}

describe('createJsonLogger', () => {
	test('writes one JSON object per line with time, level, event and the fields', (t) => {
		t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2025, 5, 1, 12, 30) });
		const out = collect();
		const logger = createJsonLogger({ stream: out.stream });
		logger.info('job_done', { outcome: 'stop', tokens: 42 });
		logger.warn('queue_full');
		const [done, full] = out.lines();
		assert.deepEqual(Object.keys(done!), ['time', 'level', 'event', 'outcome', 'tokens']);
		assert.equal(done!.level, 'info');
		assert.equal(done!.event, 'job_done');
		assert.equal(done!.outcome, 'stop');
		assert.equal(done!.tokens, 42);
		assert.equal(done!.time, '2025-06-01T12:30:00.000Z');
		assert.deepEqual(Object.keys(full!), ['time', 'level', 'event']);
		assert.equal(full!.level, 'warn');
	});

	test('leaves out levels below the one chosen, info by default', () => {
		const out = collect();
		const logger = createJsonLogger({ stream: out.stream });
		logger.debug('noise');
		logger.info('kept');
		const quiet = collect();
		const warnOnly = createJsonLogger({ stream: quiet.stream, level: 'warn' });
		warnOnly.info('dropped');
		warnOnly.warn('kept');
		warnOnly.error('kept too');
		const loud = collect();
		createJsonLogger({ stream: loud.stream, level: 'debug' }).debug('kept');
		assert.deepEqual(out.lines().map((line) => line.event), ['kept']);
		assert.deepEqual(quiet.lines().map((line) => line.level), ['warn', 'error']);
		assert.deepEqual(loud.lines().map((line) => line.level), ['debug']);
	});

	test('writes an Error as its message and code, wherever it sits in the fields', () => {
		const out = collect();
		const logger = createJsonLogger({ stream: out.stream });
		const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
		logger.error('chroma_failed', { error: failure, attempts: [new Error('first try')] });
		const [line] = out.lines();
		assert.deepEqual(line!.error, { message: 'connect ECONNREFUSED 127.0.0.1:8000', code: 'ECONNREFUSED' });
		assert.deepEqual(line!.attempts, [{ message: 'first try' }]);
		assert.ok(!out.text().includes('at '), 'no stack trace');
	});

	test('keeps time, level and event when a field has the same name', () => {
		const out = collect();
		createJsonLogger({ stream: out.stream }).info('started', { level: 'fake', event: 'fake', port: 8787 });
		const [line] = out.lines();
		assert.equal(line!.level, 'info');
		assert.equal(line!.event, 'started');
		assert.equal(line!.port, 8787);
	});

	test('still writes a line, without throwing, when the fields cannot be serialized', () => {
		const out = collect();
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		createJsonLogger({ stream: out.stream }).error('odd', { cyclic, big: 1n });
		const [line] = out.lines();
		assert.equal(line!.event, 'odd');
		assert.match(line!.log_error as string, /not serializable/);
	});

	test('writes a bigint as a string', () => {
		const out = collect();
		createJsonLogger({ stream: out.stream }).info('sized', { bytes: 12345678901234567890n });
		assert.equal(out.lines()[0]!.bytes, '12345678901234567890');
	});
});
