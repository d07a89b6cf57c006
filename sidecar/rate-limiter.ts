/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
	/** Tokens each key earns per minute; 0 turns limiting off. */
	perMinute: number;
	/** Most tokens a key can save up, i.e. questions it may ask in a row; defaults to `perMinute`. */
	burst?: number;
	/** Clock in milliseconds. */
	now?: () => number;
	/** Most keys remembered; beyond it the least recently seen are forgotten. Defaults to 10,000. */
	maxKeys?: number;
}

/** Per-key token buckets made by {@link createRateLimiter}. */
export interface RateLimiter {
	/** Takes a token from `key`'s bucket; false when it is empty. */
	take(key: string): boolean;
	/** Forgets every key. */
	reset(): void;
	/** Keys remembered now, for a bound that can be checked. */
	readonly size: number;
}

interface Bucket {
	tokens: number;
	updatedAt: number;
}

/**
 * Creates a token bucket limiter keyed by client address, so one visitor cannot fill the model's
 * queue. Memory stays bounded: idle keys are dropped as they refill and the least recently seen
 * key makes way once `maxKeys` are remembered.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
	const { perMinute } = options;
	const burst = options.burst ?? perMinute;
	const maxKeys = options.maxKeys ?? 10_000;
	const now = options.now ?? (() => performance.now());
	if (!(perMinute >= 0) || !Number.isFinite(perMinute)) {
		throw new RangeError(`perMinute must be a finite number, 0 or more, not ${perMinute}`);
	}
	if (perMinute > 0 && !(burst >= 1)) throw new RangeError(`burst must be 1 or more, not ${burst}`);
	if (!(maxKeys >= 1)) throw new RangeError(`maxKeys must be 1 or more, not ${maxKeys}`);

	const perMs = perMinute / 60_000;
	// After this long unseen a bucket is full again, and a full bucket is the same as none.
	const refillMs = burst / perMs;
	// Kept in order of last use, so the oldest key is always first.
	const buckets = new Map<string, Bucket>();

	function dropIdle(time: number): void {
		for (const [key, bucket] of buckets) {
			if (time - bucket.updatedAt < refillMs) break;
			buckets.delete(key);
		}
	}

	return {
		take(key) {
			if (perMinute === 0) return true;
			const time = now();
			dropIdle(time);
			const bucket = buckets.get(key);
			let tokens = burst;
			if (bucket) {
				buckets.delete(key);
				// A clock that steps back must not take tokens away.
				tokens = Math.min(burst, bucket.tokens + Math.max(0, time - bucket.updatedAt) * perMs);
			} else if (buckets.size >= maxKeys) {
				buckets.delete(buckets.keys().next().value!);
			}
			const allowed = tokens >= 1;
			buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, updatedAt: time });
			return allowed;
		},
		reset() {
			buckets.clear();
		},
		get size() {
			return buckets.size;
		},
	};
}
