import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { readBundle, type BundleChunk } from '../../integration/bundle.ts';
import { createEmbedder } from '../../integration/create-embedder.ts';
import { readKb, searchKb, type Kb } from '../../integration/runtime/kb.ts';
import { buildSite, copyFixture, type FixtureSite } from '../helpers/fixture-site.ts';
import { ensureTestModels } from '../models/make-models.ts';
import { PASSAGES } from '../models/passages.ts';
import { writeArticles } from '../helpers/many-articles.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const articleCount = 60;
const queryCount = 1000;

// A realistic number of chunks built through the whole pipeline with the 384-wide tiny model: at a handful
// of chunks kb.json's fixed fields would dominate the sizes being compared.
describe('kb.json of a site with many articles', () => {
	let site: FixtureSite;
	let kb: Kb;
	let kbText: string;
	let chunks: BundleChunk[];

	before(async () => {
		const models = await ensureTestModels();
		site = await copyFixture('many-articles');
		await writeArticles(join(site.dir, 'src', 'pages', 'notes'), articleCount);
		const built = await buildSite(site.dir, { CONCIERGE_TEST_E5: models.e5Wide });
		assert.equal(built.code, 0, built.log);
		kbText = await readFile(join(site.dir, 'dist', 'concierge', 'kb.json'), 'utf8');
		kb = readKb(kbText);
		chunks = (await readBundle(join(site.dir, '.concierge', 'bundle.jsonl'))).chunks;
	});

	after(async () => {
		await site?.remove();
	});

	test('is at most a fifth of the seeds\' format raw and 0.35 of it gzipped', (t) => {
		assert.ok(kb.chunks.length >= 200, `only ${kb.chunks.length} chunks`);
		const seeds = JSON.stringify(
			chunks.map((chunk) => ({
				id: chunk.id,
				url: chunk.metadata.anchor ? `${chunk.metadata.url}#${chunk.metadata.anchor}` : chunk.metadata.url,
				title: chunk.metadata.title,
				heading: chunk.metadata.heading,
				vector: chunk.embedding.map((value) => Number(value.toFixed(6))),
			})),
		);
		const raw = Buffer.byteLength(kbText) / Buffer.byteLength(seeds);
		const gzip = gzipSync(kbText, { level: 9 }).length / gzipSync(seeds, { level: 9 }).length;
		t.diagnostic(`${kb.chunks.length} chunks: raw ratio ${raw.toFixed(3)}, gzip ratio ${gzip.toFixed(3)}`);
		assert.ok(raw <= 0.2, `raw ratio ${raw.toFixed(3)} over ${kb.chunks.length} chunks`);
		assert.ok(gzip <= 0.35, `gzip ratio ${gzip.toFixed(3)} over ${kb.chunks.length} chunks`);
	});

	test('ranks like the bundle\'s full-precision vectors over 1,000 queries', async (t) => {
		const models = await ensureTestModels();
		const embedder = await createEmbedder({ model: models.e5Wide, dtype: 'q8' });
		let inTop20 = 0;
		let overlap = 0;
		try {
			const queries = await embedder.embedQueries(makeQueries());
			for (const query of queries) {
				const exact = chunks
					.map((chunk) => ({ id: chunk.id, score: dot(query, chunk.embedding) }))
					.sort((a, b) => b.score - a.score)
					.slice(0, 10)
					.map((item) => item.id);
				const compact = searchKb(kb, query, { topK: 20, maxDistance: 2 }).map((match) => match.chunk.id);
				inTop20 += exact.filter((id) => compact.includes(id)).length;
				overlap += exact.filter((id) => compact.slice(0, 10).includes(id)).length;
			}
		} finally {
			await embedder.dispose();
		}
		const total = queryCount * 10;
		t.diagnostic(`exact top 10 inside compact top 20: ${((100 * inTop20) / total).toFixed(2)}%, top-10 overlap: ${((100 * overlap) / total).toFixed(2)}%`);
		assert.ok(inTop20 / total >= 0.999, `${((100 * inTop20) / total).toFixed(2)}% of the exact top 10 inside the compact top 20`);
		assert.ok(overlap / total >= 0.97, `top-10 overlap ${((100 * overlap) / total).toFixed(2)}%`);
	});
});

function dot(a: Float32Array, b: readonly number[]): number {
	let sum = 0;
	for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
	return sum;
}

/** Fresh questions made of words from the passages, not copies of any chunk. */
function makeQueries(): string[] {
	const next = seededRandom(11);
	const words = PASSAGES.flatMap((item) => (item.lang === 'ja' ? [...item.query.replace(/[？?。、]/g, '')] : item.query.split(/\W+/))).filter(
		Boolean,
	);
	return Array.from({ length: queryCount }, () => {
		const length = 3 + Math.floor(next() * 5);
		return Array.from({ length }, () => words[Math.floor(next() * words.length)]).join(' ');
	});
}
