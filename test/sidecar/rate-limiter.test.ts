import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRateLimiter } from '../../sidecar/rate-limiter.ts';

function takeTimes(take: () => boolean, times: number): boolean[] {
	return Array.from({ length: times }, take);
}

describe('createRateLimiter', () => {
	test('lets a key take burst tokens in a row and then refuses it', () => {
		const limiter = createRateLimiter({ perMinute: 6, burst: 3, now: () => 0 });
		assert.deepEqual(takeTimes(() => limiter.take('203.0.113.7'), 4), [true, true, true, false]);
	});

	test('refills a key at perMinute tokens a minute', () => {
		let clock = 0;
		const limiter = createRateLimiter({ perMinute: 6, burst: 1, now: () => clock });
		assert.equal(limiter.take('a'), true);
		clock = 9_999;
		assert.equal(limiter.take('a'), false, 'a token takes 10 s to come back');
		clock = 10_000;
		assert.equal(limiter.take('a'), true);
		assert.equal(limiter.take('a'), false);
	});

	test('never saves up more than burst tokens however long a key stays away', () => {
		let clock = 0;
		const limiter = createRateLimiter({ perMinute: 60, burst: 2, now: () => clock });
		limiter.take('a');
		clock = 3_600_000;
		assert.deepEqual(takeTimes(() => limiter.take('a'), 3), [true, true, false]);
	});

	test('defaults burst to a minute’s worth of tokens', () => {
		const limiter = createRateLimiter({ perMinute: 5, now: () => 0 });
		assert.deepEqual(takeTimes(() => limiter.take('a'), 6), [true, true, true, true, true, false]);
	});

	test('keeps a separate bucket for every key', () => {
		const limiter = createRateLimiter({ perMinute: 1, burst: 1, now: () => 0 });
		assert.equal(limiter.take('a'), true);
		assert.equal(limiter.take('a'), false);
		assert.equal(limiter.take('b'), true);
	});

	test('always allows when perMinute is 0 and remembers nothing', () => {
		const limiter = createRateLimiter({ perMinute: 0, now: () => 0 });
		assert.ok(takeTimes(() => limiter.take('a'), 1000).every(Boolean));
		assert.equal(limiter.size, 0);
	});

	test('does not take tokens away when the clock steps back', () => {
		let clock = 10_000;
		const limiter = createRateLimiter({ perMinute: 6, burst: 2, now: () => clock });
		limiter.take('a');
		clock = 0;
		assert.equal(limiter.take('a'), true);
	});

	test('forgets the least recently seen key beyond maxKeys', () => {
		let clock = 0;
		const limiter = createRateLimiter({ perMinute: 1, burst: 1, maxKeys: 2, now: () => clock });
		limiter.take('a');
		clock = 1;
		limiter.take('b');
		clock = 2;
		limiter.take('a');
		clock = 3;
		limiter.take('c');
		assert.equal(limiter.size, 2);
		assert.equal(limiter.take('a'), false, 'a was seen more recently than b, so it is still remembered');
		assert.equal(limiter.take('b'), true, 'b was forgotten and starts with a full bucket');
	});

	test('drops keys once they have been idle long enough to be full again', () => {
		let clock = 0;
		const limiter = createRateLimiter({ perMinute: 6, burst: 2, now: () => clock });
		for (let index = 0; index < 100; index++) limiter.take(`198.51.100.${index}`);
		assert.equal(limiter.size, 100);
		clock = 20_000;
		limiter.take('192.0.2.1');
		assert.equal(limiter.size, 1);
	});

	test('reset forgets every key', () => {
		const limiter = createRateLimiter({ perMinute: 1, burst: 1, now: () => 0 });
		limiter.take('a');
		limiter.reset();
		assert.equal(limiter.size, 0);
		assert.equal(limiter.take('a'), true);
	});

	test('rejects options that could never allow a request', () => {
		assert.throws(() => createRateLimiter({ perMinute: -1 }), RangeError);
		assert.throws(() => createRateLimiter({ perMinute: 6, burst: 0.5 }), RangeError);
		assert.throws(() => createRateLimiter({ perMinute: 6, maxKeys: 0 }), RangeError);
	});
});
