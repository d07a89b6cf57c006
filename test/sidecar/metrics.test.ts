import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMetrics } from '../../sidecar/metrics.ts';

interface Family {
	help: string;
	type: string;
	/** Sample values by name and labels as written, e.g. `x_bucket{le="1"}`. */
	samples: Map<string, number>;
}

/** Reads the text exposition format strictly enough to catch malformed output. */
function parse(text: string): Map<string, Family> {
	assert.ok(text.endsWith('\n'), 'the exposition ends with a line feed');
	const families = new Map<string, Family>();
	let current: { name: string; family: Family } | undefined;
	for (const line of text.slice(0, -1).split('\n')) {
		const help = /^# HELP (\w+) (.+)$/.exec(line);
		if (help) {
			const [, name, description] = help;
			assert.ok(!families.has(name!), `${name} is described once`);
			current = { name: name!, family: { help: description!, type: '', samples: new Map() } };
			families.set(name!, current.family);
			continue;
		}
		const type = /^# TYPE (\w+) (counter|gauge|histogram)$/.exec(line);
		if (type) {
			assert.equal(type[1], current?.name, 'TYPE follows the HELP of the same metric');
			current!.family.type = type[2]!;
			continue;
		}
		const sample = /^(\w+)(\{(\w+)="([^"\\]*)"\})? (\S+)$/.exec(line);
		assert.ok(sample, `a sample line: ${line}`);
		const [, name, labels = '', , , value] = sample;
		assert.ok(current, 'a sample comes after its HELP and TYPE lines');
		const suffix = current.family.type === 'histogram' ? /^(.*)_(bucket|sum|count)$/.exec(name!)?.[1] : name;
		assert.equal(suffix, current.name, `${name} belongs to ${current.name}`);
		const number = value === '+Inf' ? Infinity : Number(value);
		assert.ok(!Number.isNaN(number), `${value} is a number`);
		current.family.samples.set(`${name}${labels}`, number);
	}
	return families;
}

function sample(families: Map<string, Family>, family: string, key: string): number | undefined {
	return families.get(family)?.samples.get(key);
}

describe('createMetrics', () => {
	test('describes every metric with HELP and TYPE lines and starts at zero', () => {
		const metrics = createMetrics();
		const families = parse(metrics.render());
		assert.deepEqual(
			new Map([...families].map(([name, family]) => [name, family.type])),
			new Map([
				['concierge_queue_depth', 'gauge'],
				['concierge_connections', 'gauge'],
				['concierge_jobs_total', 'counter'],
				['concierge_tokens_generated_total', 'counter'],
				['concierge_ttft_seconds', 'histogram'],
				['concierge_tokens_per_second', 'histogram'],
			]),
		);
		for (const family of families.values()) {
			assert.ok(family.help.length > 0);
			for (const value of family.samples.values()) assert.equal(value, 0);
		}
		assert.equal(metrics.contentType.split(';').slice(0, 2).join(';'), 'text/plain; version=0.0.4');
	});

	test('sets the gauges to the latest value', () => {
		const metrics = createMetrics();
		metrics.setQueueDepth(3);
		metrics.setQueueDepth(2);
		metrics.setConnections(7);
		const families = parse(metrics.render());
		assert.equal(sample(families, 'concierge_queue_depth', 'concierge_queue_depth'), 2);
		assert.equal(sample(families, 'concierge_connections', 'concierge_connections'), 7);
	});

	test('counts jobs by outcome, every outcome always present', () => {
		const metrics = createMetrics();
		metrics.countJob('stop');
		metrics.countJob('stop');
		metrics.countJob('busy');
		const jobs = parse(metrics.render()).get('concierge_jobs_total')!.samples;
		assert.deepEqual(
			jobs,
			new Map([
				['concierge_jobs_total{outcome="stop"}', 2],
				['concierge_jobs_total{outcome="length"}', 0],
				['concierge_jobs_total{outcome="cancelled"}', 0],
				['concierge_jobs_total{outcome="no_context"}', 0],
				['concierge_jobs_total{outcome="error"}', 0],
				['concierge_jobs_total{outcome="busy"}', 1],
				['concierge_jobs_total{outcome="timeout"}', 0],
			]),
		);
	});

	test('adds generated tokens and ignores amounts that would make the counter go down', () => {
		const metrics = createMetrics();
		metrics.addTokens(120);
		metrics.addTokens(-5);
		metrics.addTokens(Number.NaN);
		metrics.addTokens(30);
		const families = parse(metrics.render());
		assert.equal(sample(families, 'concierge_tokens_generated_total', 'concierge_tokens_generated_total'), 150);
	});

	test('writes histograms as cumulative buckets ending in +Inf, with sum and count', () => {
		const metrics = createMetrics();
		for (const seconds of [0.05, 0.3, 0.3, 3, 1000]) metrics.observeTtft(seconds);
		metrics.observeTtft(Number.NaN);
		const ttft = parse(metrics.render()).get('concierge_ttft_seconds')!.samples;
		const buckets = [...ttft].filter(([key]) => key.startsWith('concierge_ttft_seconds_bucket'));
		const bounds = buckets.map(([key]) => /le="([^"]+)"/.exec(key)![1]);
		assert.equal(bounds.at(-1), '+Inf');
		const numericBounds = bounds.slice(0, -1).map(Number);
		assert.deepEqual(numericBounds, numericBounds.toSorted((a, b) => a - b), 'bounds rise');
		const counts = buckets.map(([, count]) => count);
		assert.ok(counts.every((count, index) => index === 0 || count >= counts[index - 1]!), 'counts are cumulative');

		assert.equal(ttft.get('concierge_ttft_seconds_bucket{le="0.1"}'), 1);
		assert.equal(ttft.get('concierge_ttft_seconds_bucket{le="0.5"}'), 3);
		assert.equal(ttft.get('concierge_ttft_seconds_bucket{le="5"}'), 4);
		assert.equal(ttft.get('concierge_ttft_seconds_bucket{le="+Inf"}'), 5);
		assert.equal(ttft.get('concierge_ttft_seconds_count'), 5);
		assert.ok(Math.abs(ttft.get('concierge_ttft_seconds_sum')! - 1003.65) < 1e-9);
	});

	test('counts a value equal to a bound in that bound’s bucket', () => {
		const metrics = createMetrics();
		metrics.observeTokensPerSecond(8);
		const speed = parse(metrics.render()).get('concierge_tokens_per_second')!.samples;
		assert.equal(speed.get('concierge_tokens_per_second_bucket{le="6"}'), 0);
		assert.equal(speed.get('concierge_tokens_per_second_bucket{le="8"}'), 1);
		assert.equal(speed.get('concierge_tokens_per_second_sum'), 8);
	});
});
