import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { encodeKb, type KbInput, type KbInputChunk } from '../../integration/encode-kb.ts';
import { KB_FORMAT, KB_VERSION, decodeKbVector, readKb, searchKb } from '../../integration/runtime/kb.ts';
import { measureFidelity } from '../helpers/kb-fidelity.ts';
import { DIMENSION, SETTINGS, cosine, e5LikeSource, randomUnit, seedFormat, withMetadata } from '../helpers/kb-vectors.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

function gzipBytes(text: string): number {
	return gzipSync(text, { level: 9 }).length;
}

function percent(fraction: number): string {
	return `${(fraction * 100).toFixed(2)}%`;
}

// ---------------------------------------------------------------------------------------------------------
// Format and round trip

describe('kb.json format', () => {
	const random = seededRandom(1);
	const input = withMetadata(Array.from({ length: 60 }, () => randomUnit(random)), random);
	input.chunks[3] = { ...(input.chunks[3] as KbInputChunk), heading: 'インストール › Linux で使う', anchor: 'linux-で使う' };
	const text = encodeKb(input);

	test('readKb gives back every chunk and setting that encodeKb was given', () => {
		const kb = readKb(text);
		const { chunks, ...settings } = input;
		const { chunks: readChunks, index: _index, ...readSettings } = kb;
		assert.deepEqual(readSettings, settings);
		assert.deepEqual(
			readChunks,
			chunks.map(({ id, url, anchor, title, heading }) => ({ id, url, anchor, title, heading })),
		);
	});

	test('readKb accepts the parsed JSON value as well as the text', () => {
		assert.deepEqual(readKb(JSON.parse(text)).chunks, readKb(text).chunks);
	});

	test('decoded vectors lie within half an int8 step of the originals in every component', () => {
		const kb = readKb(text);
		input.chunks.forEach((chunk, j) => {
			const decoded = decodeKbVector(kb, j);
			const halfStep = (kb.index.scales[j] as number) / 2;
			assert.ok(halfStep > 0 && halfStep < 0.002, `scale of chunk ${j} is ${halfStep * 2}`);
			for (let k = 0; k < DIMENSION; k++) {
				const error = Math.abs((decoded[k] as number) - (chunk.vector[k] as number));
				assert.ok(error <= halfStep + 1e-9, `chunk ${j} component ${k} is off by ${error}`);
			}
			assert.ok(cosine(decoded, chunk.vector) > 0.9999);
		});
	});

	test('a knowledge base with no chunks, or a single one, still encodes, reads and searches', () => {
		const empty = readKb(encodeKb({ ...SETTINGS, chunks: [] }));
		assert.deepEqual(empty.chunks, []);
		assert.deepEqual(searchKb(empty, randomUnit(random)), []);

		// One chunk is its own centroid, so its scale is 0 and the vector lives entirely in the centroid.
		const only = input.chunks[0] as KbInputChunk;
		const single = readKb(encodeKb({ ...SETTINGS, chunks: [only] }));
		assert.equal(single.index.scales[0], 0);
		const [match] = searchKb(single, only.vector);
		assert.equal(match?.chunk.id, only.id);
		assert.ok((match?.distance as number) < 1e-6);
	});

	test('encodeKb writes the same bytes for the same input', () => {
		assert.equal(encodeKb(input), text);
	});

	test('encodeKb writes only the documented fields, so no article text can slip into the public file', () => {
		const leaky = {
			...input,
			chunks: input.chunks.map((chunk) => ({ ...chunk, text: 'SECRET ARTICLE BODY', html: '<p>SECRET</p>' })),
			body: 'SECRET',
		};
		const leakyText = encodeKb(leaky as KbInput);
		assert.equal(leakyText, text);
		assert.doesNotMatch(leakyText, /SECRET/);

		const file = JSON.parse(leakyText) as Record<string, unknown>;
		assert.deepEqual(Object.keys(file).sort(), [
			'articles',
			'chunks',
			'contentVersion',
			'dimension',
			'dtype',
			'format',
			'maxDistance',
			'model',
			'normalize',
			'pooling',
			'queryPrefix',
			'topK',
			'vectors',
			'version',
		]);
		assert.equal(file.format, KB_FORMAT);
		assert.equal(file.version, KB_VERSION);
		assert.deepEqual(Object.keys(file.vectors as object).sort(), ['data', 'encoding']);
		for (const article of file.articles as unknown[]) {
			assert.ok(Array.isArray(article) && article.length === 2, 'an article is [url, title]');
			assert.ok(article.every((value) => typeof value === 'string'));
		}
		for (const chunk of file.chunks as unknown[]) {
			assert.ok(Array.isArray(chunk) && chunk.length === 4, 'a chunk is [article, n, anchor, heading]');
			assert.deepEqual(chunk.map((value) => typeof value), ['number', 'number', 'string', 'string']);
		}
	});

	test('kb.json stores each page once and derives chunk ids from it', () => {
		const file = JSON.parse(text) as { articles: unknown[]; chunks: unknown[] };
		assert.equal(file.articles.length, new Set(input.chunks.map((chunk) => chunk.url)).size);
		assert.equal(file.chunks.length, input.chunks.length);
		for (const chunk of input.chunks) assert.ok(!text.includes(chunk.id), `${chunk.id} is derived, not written out`);
	});
});

// ---------------------------------------------------------------------------------------------------------
// Validation

describe('kb.json validation', () => {
	const random = seededRandom(2);
	const input = withMetadata(Array.from({ length: 3 }, () => randomUnit(random, 8)), random, { ...SETTINGS, dimension: 8 });
	const valid = JSON.parse(encodeKb(input)) as Record<string, unknown>;
	const withField = (name: string, value: unknown): Record<string, unknown> => ({ ...valid, [name]: value });
	const without = (name: string): Record<string, unknown> => {
		const copy = { ...valid };
		delete copy[name];
		return copy;
	};

	test('readKb refuses another format tag, naming "format"', () => {
		assert.throws(() => readKb(withField('format', 'something-else')), /^Error: kb\.json: "format" must be "astro-concierge-kb", got "something-else"$/);
	});

	test('readKb refuses another version, naming "version"', () => {
		assert.throws(() => readKb(withField('version', 2)), /kb\.json: "version" must be 1 .*got 2/);
		assert.throws(() => readKb(without('version')), /kb\.json: "version" must be 1 .*got nothing/);
	});

	test('readKb refuses a file missing any field, naming that field', () => {
		for (const name of Object.keys(valid)) {
			assert.throws(() => readKb(without(name)), new RegExp(`^Error: kb\\.json: "${name}"`), `without ${name}`);
		}
	});

	test('readKb refuses a dimension that is not a positive integer', () => {
		for (const value of [0, -384, 1.5, '384', null]) {
			assert.throws(() => readKb(withField('dimension', value)), /^Error: kb\.json: "dimension" must be a positive integer$/);
		}
	});

	test('readKb refuses settings of the wrong kind, naming each', () => {
		assert.throws(() => readKb(withField('pooling', 'cls')), /kb\.json: "pooling" must be "mean"/);
		assert.throws(() => readKb(withField('normalize', false)), /kb\.json: "normalize" must be true/);
		assert.throws(() => readKb(withField('topK', 0)), /kb\.json: "topK" must be a positive integer/);
		assert.throws(() => readKb(withField('maxDistance', 3)), /kb\.json: "maxDistance" must be a number from 0 to 2/);
		assert.throws(() => readKb(withField('queryPrefix', 1)), /kb\.json: "queryPrefix" must be a string/);
	});

	test('readKb refuses vector data of the wrong length, saying how long it should be', () => {
		const vectors = valid.vectors as { encoding: string; data: string };
		const short = Buffer.from(vectors.data, 'base64').subarray(0, -1).toString('base64');
		assert.throws(
			() => readKb(withField('vectors', { ...vectors, data: short })),
			/kb\.json: "vectors\.data" holds 67 bytes; 3 chunks at dimension 8 need 68/,
		);
		assert.throws(() => readKb(withField('dimension', 16)), /kb\.json: "vectors\.data" holds 68 bytes; 3 chunks at dimension 16 need 124/);
	});

	test('readKb refuses vector data that is not base64 or has another encoding', () => {
		const vectors = valid.vectors as { encoding: string; data: string };
		assert.throws(() => readKb(withField('vectors', { ...vectors, data: '@@@@' })), /kb\.json: "vectors\.data" is not valid base64/);
		assert.throws(() => readKb(withField('vectors', { ...vectors, encoding: 'float32' })), /kb\.json: "vectors\.encoding" must be "int8-centered"/);
	});

	test('readKb refuses chunk entries that do not fit the articles table', () => {
		const chunks = valid.chunks as unknown[][];
		const broken = [chunks[0], [7, 1, '', ''], chunks[2]];
		assert.throws(() => readKb(withField('chunks', broken)), /kb\.json: "chunks\[1\]\[0\]" must be an index into "articles"/);
		assert.throws(() => readKb(withField('chunks', [chunks[0], ['0', 1, '', ''], chunks[2]])), /"chunks\[1\]\[0\]"/);
		assert.throws(() => readKb(withField('chunks', [chunks[0], chunks[0], chunks[2]])), /kb\.json: "chunks\[1\]" repeats the id/);
		assert.throws(() => readKb(withField('articles', [['/a/']])), /kb\.json: "articles\[0\]" must be \[url, title\]/);
	});

	test('readKb refuses a repeated id however it comes about: one url in two article entries, or an n past 2⁵³ / articles', () => {
		const articles = valid.articles as unknown[][];
		const twice = [...articles, articles[0]];
		const chunks = (...entries: Array<[number, number]>) => entries.map(([article, n]) => [article, n, '', '']);
		assert.throws(
			() => readKb({ ...valid, articles: twice, chunks: chunks([0, 1], [articles.length, 1], [0, 2]) }),
			/kb\.json: "chunks\[1\]" repeats the id ".*#1"/,
		);
		const large = Number.MAX_SAFE_INTEGER;
		assert.throws(
			() => readKb({ ...valid, chunks: chunks([0, large], [0, large - 1], [0, large]) }),
			new RegExp(`kb\\.json: "chunks\\[2\\]" repeats the id ".*#${large}"`),
		);
		const kb = readKb({ ...valid, articles: twice, chunks: chunks([0, large], [0, large - 1], [articles.length, 0]) });
		assert.deepEqual(
			kb.chunks.map((chunk) => chunk.id),
			[`${articles[0]?.[0]}#${large}`, `${articles[0]?.[0]}#${large - 1}`, `${articles[0]?.[0]}#0`],
		);
	});

	test('readKb refuses text that is not JSON', () => {
		assert.throws(() => readKb('{"format":'), /^Error: kb\.json: not valid JSON/);
		assert.throws(() => readKb('[]'), /kb\.json: must be a JSON object/);
	});

	test('encodeKb refuses a vector whose length is not the dimension, naming the chunk', () => {
		const chunks = input.chunks.map((chunk, i) => (i === 1 ? { ...chunk, vector: randomUnit(random, 7) } : chunk));
		assert.throws(() => encodeKb({ ...input, chunks }), /encodeKb: chunks\[1\] \(.+#\d+\) "vector" has 7 components but "dimension" is 8/);
	});

	test('encodeKb refuses duplicate ids', () => {
		const chunks = [...input.chunks, input.chunks[0] as KbInputChunk];
		assert.throws(() => encodeKb({ ...input, chunks }), /encodeKb: chunks\[3\] repeats the id ".+#0"/);
	});

	test('encodeKb refuses numbers that are not finite and vectors that are not unit length', () => {
		const nan = Float32Array.from(input.chunks[0]?.vector ?? [], (value, k) => (k === 2 ? Number.NaN : value));
		assert.throws(() => encodeKb({ ...input, chunks: [{ ...(input.chunks[0] as KbInputChunk), vector: nan }] }), /component 2 is not a finite number/);
		const long = Float32Array.from(input.chunks[0]?.vector ?? [], (value) => value * 2);
		assert.throws(() => encodeKb({ ...input, chunks: [{ ...(input.chunks[0] as KbInputChunk), vector: long }] }), /must be unit length/);
		assert.throws(() => encodeKb({ ...input, topK: Number.NaN }), /^Error: encodeKb: "topK" must be a positive integer$/);
		assert.throws(() => encodeKb({ ...input, maxDistance: Number.POSITIVE_INFINITY }), /encodeKb: "maxDistance"/);
		assert.throws(() => encodeKb({ ...input, dimension: 0 }), /encodeKb: "dimension" must be a positive integer/);
	});

	test('encodeKb refuses ids that are not <url>#<n> and pages with two titles', () => {
		const first = input.chunks[0] as KbInputChunk;
		for (const id of ['/elsewhere/#0', `${first.url}#x`, `${first.url}#01`, first.url]) {
			assert.throws(() => encodeKb({ ...input, chunks: [{ ...first, id }] }), /"id" must be "<url>#<n>"/, id);
		}
		const retitled = { ...first, id: `${first.url}#99`, title: `${first.title} (draft)` };
		assert.throws(() => encodeKb({ ...input, chunks: [first, retitled] }), /encodeKb: chunks\[1\] has title/);
	});
});

// ---------------------------------------------------------------------------------------------------------
// Search behaviour

describe('searchKb', () => {
	const random = seededRandom(3);
	const next = e5LikeSource(random);
	const input = withMetadata(Array.from({ length: 300 }, next), random, { ...SETTINGS, topK: 6, maxDistance: 0.14 });
	const kb = readKb(encodeKb(input));
	const decoded = kb.chunks.map((_, j) => decodeKbVector(kb, j));
	const queries = Array.from({ length: 20 }, next);

	/** Every chunk, nearest first, by float64 cosine against the decoded vectors. */
	function bruteForce(query: Float32Array): Array<{ id: string; distance: number }> {
		return kb.chunks
			.map((chunk, j) => ({ id: chunk.id, distance: 1 - cosine(query, decoded[j] as Float64Array) }))
			.sort((a, b) => a.distance - b.distance);
	}

	function assertSameMatches(actual: ReturnType<typeof searchKb>, expected: Array<{ id: string; distance: number }>): void {
		assert.deepEqual(
			actual.map((match) => match.chunk.id),
			expected.map((match) => match.id),
		);
		actual.forEach((match, i) => assert.ok(Math.abs(match.distance - (expected[i]?.distance ?? Number.NaN)) < 1e-9));
	}

	test('returns the nearest chunks first, with their cosine distance to the stored vectors', () => {
		for (const query of queries) {
			const matches = searchKb(kb, query, { topK: 25, maxDistance: 2 });
			assertSameMatches(matches, bruteForce(query).slice(0, 25));
			for (let i = 1; i < matches.length; i++) {
				assert.ok((matches[i - 1]?.distance as number) <= (matches[i]?.distance as number));
			}
		}
	});

	test('uses the topK and maxDistance that kb.json carries unless told otherwise', () => {
		let limitedByDistance = 0;
		for (const query of queries) {
			const expected = bruteForce(query).filter((match) => match.distance <= kb.maxDistance).slice(0, 6);
			if (expected.length < 6) limitedByDistance++;
			assertSameMatches(searchKb(kb, query), expected);
		}
		assert.ok(limitedByDistance > 0 && limitedByDistance < queries.length, 'the queries exercise both limits');
	});

	test('keeps at most topK matches and none beyond maxDistance', () => {
		const query = queries[0] as Float32Array;
		const all = bruteForce(query);
		assertSameMatches(searchKb(kb, query, { topK: 3, maxDistance: 2 }), all.slice(0, 3));
		assertSameMatches(searchKb(kb, query, { topK: 1000, maxDistance: 2 }), all);
		const between = ((all[4]?.distance as number) + (all[5]?.distance as number)) / 2;
		assertSameMatches(searchKb(kb, query, { topK: 50, maxDistance: between }), all.slice(0, 5));
		assert.deepEqual(searchKb(kb, query, { maxDistance: 0 }), []);
	});

	test('gives the same ranking for a query that is not quite unit length', () => {
		const query = queries[1] as Float32Array;
		const scaled = Float32Array.from(query, (value) => value * 1.01);
		assert.deepEqual(
			searchKb(kb, scaled, { topK: 10, maxDistance: 2 }).map((match) => match.chunk.id),
			searchKb(kb, query, { topK: 10, maxDistance: 2 }).map((match) => match.chunk.id),
		);
	});

	test('refuses a query of another dimension and nonsense limits', () => {
		assert.throws(() => searchKb(kb, new Float32Array(3)), /searchKb: the query has 3 components but kb\.json vectors have 384/);
		assert.throws(() => searchKb(kb, new Float32Array(DIMENSION)), /non-zero/);
		assert.throws(() => searchKb(kb, queries[0] as Float32Array, { topK: 0 }), /topK must be a positive integer/);
		assert.throws(() => searchKb(kb, queries[0] as Float32Array, { maxDistance: -1 }), /maxDistance must be a number/);
	});
});

// ---------------------------------------------------------------------------------------------------------
// Size and fidelity against full precision

describe('kb.json size and fidelity', () => {
	// Ratios are per chunk plus a small fixed header, so a thousand chunks measure them as well as more would.
	const SIZE_CHUNKS = 1000;

	for (const kind of ['random unit', 'e5-like'] as const) {
		test(`is at most 0.2 of the seeds' format raw and 0.35 gzipped, for ${kind} vectors`, (t) => {
			const random = seededRandom(kind === 'e5-like' ? 11 : 12);
			const next = kind === 'e5-like' ? e5LikeSource(random) : () => randomUnit(random);
			const input = withMetadata(Array.from({ length: SIZE_CHUNKS }, next), random);
			const compact = encodeKb(input);
			const seeds = seedFormat(input);
			const [compactBytes, seedsBytes] = [Buffer.byteLength(compact), Buffer.byteLength(seeds)];
			const [compactGzip, seedsGzip] = [gzipBytes(compact), gzipBytes(seeds)];
			const raw = compactBytes / seedsBytes;
			const gzip = compactGzip / seedsGzip;
			t.diagnostic(
				`${kind}, ${SIZE_CHUNKS} chunks: kb.json ${compactBytes} B (${compactGzip} B gzip), ` +
					`seeds' format ${seedsBytes} B (${seedsGzip} B gzip); ratio raw ${raw.toFixed(3)}, gzip ${gzip.toFixed(3)}`,
			);
			assert.ok(raw <= 0.2, `raw ratio ${raw}`);
			assert.ok(gzip <= 0.35, `gzip ratio ${gzip}`);
		});
	}

	const QUERIES = 1000;

	// e5-like vectors get the full 20,000 chunks, the case that matters. Random ones get 5,000, because the
	// search alone costs about 0.75 ms per 1,000 chunks per query here and the file should finish in ~20 s.
	for (const [kind, chunkCount, seed] of [
		['e5-like', 20_000, 21],
		['random unit', 5_000, 22],
	] as const) {
		test(`keeps 99.9% of the exact top 10 inside its top 20 and 97% in its top 10, for ${kind} vectors`, async (t) => {
			const fidelity = await measureFidelity(kind, chunkCount, QUERIES, seed);
			if (kind === 'e5-like') {
				t.diagnostic(`mean pairwise cosine of 300 sampled vectors: ${fidelity.meanCosine.toFixed(3)}`);
				assert.ok(fidelity.meanCosine >= 0.7 && fidelity.meanCosine <= 0.85, `mean pairwise cosine ${fidelity.meanCosine}`);
			}
			t.diagnostic(
				`${kind}, ${chunkCount} chunks × ${QUERIES} fresh queries: exact top 10 inside compact top 20 ${percent(fidelity.within20)}, ` +
					`top-10 overlap ${percent(fidelity.overlap10)} (worst query ${fidelity.worstTop10}/10); ` +
					`largest decoding error ${fidelity.epsilon.toFixed(4)}; ${fidelity.fullScans} queries needed a full exact scan`,
			);
			assert.ok(fidelity.within20 >= 0.999, `top 10 inside top 20: ${percent(fidelity.within20)}`);
			assert.ok(fidelity.overlap10 >= 0.97, `top-10 overlap: ${percent(fidelity.overlap10)}`);
		});
	}
});

