import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { encodeKb } from '../../integration/encode-kb.ts';
import { readKb, searchKb, type Kb } from '../../integration/runtime/kb.ts';
import { e5LikeSource, randomUnit, SETTINGS, withMetadata } from '../helpers/kb-vectors.ts';
import { seededRandom } from '../helpers/seeded-random.ts';
import { openRuntimePage, type RuntimePage } from '../helpers/runtime-page.ts';

// Node has no Uint8Array.prototype.setFromBase64, so only a browser runs readKb's path that decodes kb.json's
// vectors straight into the kernel's memory: this compares it, and its refusals, with Node's.

/** What a read gave, as plain data that survives the trip out of the page. */
interface Outcome {
	error?: string;
	chunks?: unknown[];
	index?: Record<string, number[]>;
	matches?: Array<[string, number]>;
}

const page = `<!doctype html>
<meta charset="utf-8">
<script type="module">
	import { readKb, searchKb } from './kb.js';
	window.native = typeof Uint8Array.prototype.setFromBase64 === 'function';
	window.read = (text, query) => {
		try {
			const kb = readKb(text);
			const index = Object.fromEntries(Object.entries(kb.index).map(([name, values]) => [name, Array.from(values)]));
			const matches = searchKb(kb, Float32Array.from(query), { topK: 10, maxDistance: 2 }).map((match) => [match.chunk.id, match.distance]);
			return { chunks: kb.chunks, index, matches };
		} catch (error) {
			return { error: error.message };
		}
	};
	window.ready = true;
</script>`;

function outcome(text: string, query: Float32Array): Outcome {
	let kb: Kb;
	try {
		kb = readKb(text);
	} catch (error) {
		return { error: (error as Error).message };
	}
	const index = Object.fromEntries(Object.entries(kb.index).map(([name, values]) => [name, Array.from(values as ArrayLike<number>)]));
	const matches = searchKb(kb, query, { topK: 10, maxDistance: 2 }).map((match): [string, number] => [match.chunk.id, match.distance]);
	return { chunks: kb.chunks, index, matches };
}

describe('readKb in Chromium', () => {
	let runtime: RuntimePage;
	let tab: Page;

	before(async () => {
		runtime = await openRuntimePage(['kb', 'score-int8'], page);
		tab = runtime.tab;
	});

	after(() => runtime?.close());

	async function inBrowser(text: string, query: Float32Array): Promise<Outcome> {
		return tab.evaluate(
			([text, query]) => (window as unknown as { read: (text: string, query: number[]) => Outcome }).read(text, query),
			[text, Array.from(query)] as const,
		);
	}

	test('decodes with the native base64 decoder into the kernel, to the same index and ranking as Node', async () => {
		assert.equal(await tab.evaluate(() => (window as unknown as { native: boolean }).native), true, 'this Chromium has setFromBase64');
		const random = seededRandom(51);
		const next = e5LikeSource(random);
		const text = encodeKb(withMetadata(Array.from({ length: 200 }, next), random));
		for (let q = 0; q < 3; q++) {
			const query = next();
			assert.deepEqual(await inBrowser(text, query), outcome(text, query));
		}
	});

	test('refuses and accepts the same vector data as Node, with the same words', async () => {
		const random = seededRandom(52);
		const dimension = 16;
		const vectors = Array.from({ length: 3 }, () => randomUnit(random, dimension));
		const valid = JSON.parse(encodeKb(withMetadata(vectors, random, { ...SETTINGS, dimension })));
		const bytes = Buffer.from(valid.vectors.data, 'base64');
		const base64 = (...parts: Buffer[]) => Buffer.concat(parts).toString('base64');
		const variants: Array<[name: string, data: string, error: RegExp | undefined]> = [
			['short', bytes.subarray(0, -1).toString('base64'), /holds 123 bytes; 3 chunks at dimension 16 need 124/],
			['long', base64(bytes, Buffer.from([1, 2, 3])), /holds 127 bytes/],
			['unpadded', base64(bytes, Buffer.from([7])).replace(/=+$/, ''), /holds 125 bytes/],
			['not base64', `${valid.vectors.data.slice(0, 8)}@@@@`, /is not valid base64/],
			['not base64 after the block', `${valid.vectors.data}@@@@`, /is not valid base64/],
			['trailing whitespace', `${valid.vectors.data}  \n`, undefined],
		];
		const query = randomUnit(random, dimension);
		for (const [name, data, error] of variants) {
			const text = JSON.stringify({ ...valid, vectors: { ...valid.vectors, data } });
			const expected = outcome(text, query);
			if (error) assert.match(expected.error ?? '', error, name);
			else assert.equal(expected.error, undefined, name);
			assert.deepEqual(await inBrowser(text, query), expected, name);
		}
	});
});
