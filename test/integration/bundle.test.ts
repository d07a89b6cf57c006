import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BUNDLE_VERSION, formatBundle, readBundle, type BundleChunk } from '../../integration/bundle.ts';
import { bundleHeader } from '../helpers/bundle-header.ts';

const header = bundleHeader({ dimension: 3, contentVersion: 'v1', chunks: 2 });

const metadata = { url: '/a/', anchor: '', title: 'A', heading: '', lang: 'en', articleHash: 'h' };
// Float32 values with every bit of their mantissa in use, so a lossy encoding would show.
const chunks: BundleChunk[] = [
	{ id: '/a/#0', text: 'First.', metadata, embedding: Array.from(Float32Array.of(0.1, -0.7071067690849304, 1 / 3)) },
	{ id: '/a/#1', text: '二つ目。', metadata, embedding: Array.from(Float32Array.of(1e-20, 0, -1)) },
];

describe('the private bundle', () => {
	let dir: string;
	before(async () => {
		dir = await mkdtemp(join(tmpdir(), 'bundle-'));
	});
	after(() => rm(dir, { recursive: true, force: true }));

	test('reads back every chunk and every float32 of its embedding exactly', async () => {
		const path = join(dir, 'bundle.jsonl');
		await writeFile(path, formatBundle(header, chunks));
		assert.deepEqual(await readBundle(path), { header, chunks });
	});

	test('refuses an embedding of the wrong size, naming the file, line and chunk', async () => {
		const path = join(dir, 'short.jsonl');
		const lines = formatBundle(header, chunks).split('\n');
		lines[2] = JSON.stringify({ ...JSON.parse(lines[2]!), embedding: Buffer.alloc(8).toString('base64') });
		await writeFile(path, lines.join('\n'));
		await assert.rejects(readBundle(path), { message: `${path}:3: chunk /a/#1 has an embedding of 8 bytes, expected 12 (3 float32 values)` });
	});

	test('refuses a bundle of another version and says to rebuild', async () => {
		const path = join(dir, 'old.jsonl');
		await writeFile(path, `${JSON.stringify({ ...header, version: 1 })}\n`);
		await assert.rejects(readBundle(path), { message: `${path}:1: bundle version 1 is not supported (expected ${BUNDLE_VERSION}); rebuild the site` });
	});
});
