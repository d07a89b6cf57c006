import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { encodeKb } from '../../integration/encode-kb.ts';
import { decodeKbVector, readKb, searchKb, type Kb } from '../../integration/runtime/kb.ts';
import { createInt8Scorer, int8ScorerQueryLimit } from '../../integration/runtime/score-int8.ts';
import { DIMENSION, e5LikeSource, randomUnit, withMetadata } from '../helpers/kb-vectors.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

describe('the WebAssembly SIMD int8 kernel', () => {
	for (const dimension of [16, DIMENSION]) {
		test(`gives exactly the integer dot products, absolute sums and sums of squares at dimension ${dimension}, extremes included`, () => {
			const count = 257;
			const scorer = createInt8Scorer(count, dimension);
			assert.ok(scorer, 'Node has WebAssembly SIMD, so the kernel must be available');
			const random = seededRandom(dimension);
			const limit = int8ScorerQueryLimit(dimension);
			for (let i = 0; i < scorer.codes.length; i++) scorer.codes[i] = Math.floor(random() * 256) - 128;
			// The first chunk is all −128 and the query all at its limit: the largest sums the kernel must hold.
			scorer.codes.fill(-128, 0, dimension);
			scorer.query.fill(-limit);
			const dots = Array.from(scorer.dots());
			assert.equal(dots[0], 128 * limit * dimension);
			for (let k = 0; k < dimension; k++) scorer.query[k] = Math.floor(random() * (2 * limit + 1)) - limit;
			const dotsAgain = Array.from(scorer.dots());
			const sums = Array.from(scorer.absoluteSums());
			const squares = Array.from(scorer.squares());
			assert.equal(squares[0], 128 * 128 * dimension);
			for (let j = 0; j < count; j++) {
				let dot = 0;
				let sum = 0;
				let square = 0;
				for (let k = 0; k < dimension; k++) {
					const code = scorer.codes[j * dimension + k] as number;
					dot += code * (scorer.query[k] as number);
					sum += Math.abs(code);
					square += code * code;
				}
				assert.equal(dotsAgain[j], dot, `dot of chunk ${j}`);
				assert.equal(sums[j], sum, `absolute sum of chunk ${j}`);
				assert.equal(squares[j], square, `sum of squares of chunk ${j}`);
			}
		});
	}

	test('puts the leading bytes asked for right before the codes, which stay 16-byte aligned', () => {
		const count = 5;
		for (const leading of [0, 4, 4 * (DIMENSION + count), 17]) {
			const scorer = createInt8Scorer(count, DIMENSION, leading);
			assert.ok(scorer);
			assert.equal(scorer.block.length, leading + count * DIMENSION);
			assert.equal(scorer.codes.byteOffset % 16, 0, `leading ${leading}`);
			assert.equal(scorer.block.byteOffset + leading, scorer.codes.byteOffset);
			// Bytes written through the block are the codes the kernel reads.
			scorer.block.fill(0xff, leading);
			assert.deepEqual(Array.from(scorer.absoluteSums()), Array(count).fill(DIMENSION));
		}
	});

	test('is not offered for a dimension that is not a multiple of 16, too large for int32 sums of squares, or for no chunks', () => {
		assert.equal(createInt8Scorer(10, 8), undefined);
		assert.equal(createInt8Scorer(10, 100), undefined);
		assert.equal(createInt8Scorer(1, 131_072), undefined);
		assert.equal(createInt8Scorer(0, DIMENSION), undefined);
	});

	test('keeps every int32 it sums below 2³¹ at any dimension it is offered for', () => {
		for (const dimension of [16, 384, 768, 1024, 4096, 131_056]) {
			assert.ok(128 * int8ScorerQueryLimit(dimension) * dimension <= 0x7fffffff, `dimension ${dimension}`);
			assert.ok(128 * 128 * dimension <= 0x7fffffff, `squares at dimension ${dimension}`);
		}
	});
});

describe('searchKb with the kernel', () => {
	// A Kb whose index is a fresh object has no kernel registered, so searchKb takes its plain JavaScript loop.
	const withoutKernel = (kb: Kb): Kb => ({ ...kb, index: { ...kb.index } });
	const same = (kb: Kb, query: Float32Array, options: { topK: number; maxDistance: number }) => {
		const fast = searchKb(kb, query, options).map((match) => [match.chunk.id, match.distance]);
		const plain = searchKb(withoutKernel(kb), query, options).map((match) => [match.chunk.id, match.distance]);
		assert.deepEqual(fast, plain);
		return fast.length;
	};

	for (const kind of ['e5-like', 'random unit'] as const) {
		test(`ranks ${kind} vectors exactly as the JavaScript loop does, to the same distances`, () => {
			const random = seededRandom(kind === 'e5-like' ? 31 : 32);
			const next = kind === 'e5-like' ? e5LikeSource(random) : () => randomUnit(random);
			const vectors = Array.from({ length: 3000 }, next);
			// Repeated vectors tie exactly: both paths must break the tie the same way (kb.json order).
			for (let j = 0; j < 40; j++) vectors[2000 + j] = vectors[j] as Float32Array;
			const kb = readKb(encodeKb(withMetadata(vectors, random)));
			let found = 0;
			for (let q = 0; q < 100; q++) {
				const query = q < 20 ? (vectors[q] as Float32Array) : next();
				found += same(kb, query, { topK: 10, maxDistance: 2 });
				found += same(kb, query, { topK: 1 + (q % 40), maxDistance: 2 });
				same(kb, query, { topK: 6, maxDistance: kind === 'e5-like' ? 0.12 : 0.9 });
			}
			assert.ok(found > 1000, 'the searches returned matches to compare');
		});
	}
});

describe('readKb with and without the kernel', () => {
	const kinds = ['e5-like', 'random unit'] as const;
	const texts = kinds.map((kind, i) => {
		const random = seededRandom(41 + i);
		const next = kind === 'e5-like' ? e5LikeSource(random) : () => randomUnit(random);
		return encodeKb(withMetadata(Array.from({ length: 500 }, next), random));
	});

	test('computes the same weights to the bit where WebAssembly is missing', () => {
		// WebAssembly goes only after the import, because Node strips the module's types with it.
		const script = `
			const { readFileSync } = await import('node:fs');
			const { readKb } = await import(${JSON.stringify(import.meta.resolve('../../integration/runtime/kb.ts'))});
			delete globalThis.WebAssembly;
			const weights = JSON.parse(readFileSync(0, 'utf8')).map((text) => {
				const { centroidWeight, codeWeight } = readKb(text).index;
				return [Array.from(centroidWeight), Array.from(codeWeight)];
			});
			process.stdout.write(JSON.stringify(weights));
		`;
		const output = execFileSync(process.execPath, ['--input-type=module', '--eval', script], { input: JSON.stringify(texts), encoding: 'utf8' });
		const withoutKernel = JSON.parse(output) as number[][][];
		texts.forEach((text, i) => {
			const { centroidWeight, codeWeight } = readKb(text).index;
			assert.deepEqual([Array.from(centroidWeight), Array.from(codeWeight)], withoutKernel[i], kinds[i]);
		});
	});

	test('weighs each chunk by 1 / ‖stored vector‖ to float64 precision', () => {
		for (const text of texts) {
			const kb = readKb(text);
			kb.chunks.forEach((_, j) => {
				const vector = decodeKbVector(kb, j);
				let squares = 0;
				for (const component of vector) squares += component * component;
				const norm = Math.sqrt(squares);
				assert.ok(Math.abs((kb.index.centroidWeight[j] as number) * norm - 1) < 1e-14, `chunk ${j}`);
				assert.ok(Math.abs((kb.index.codeWeight[j] as number) * norm - (kb.index.scales[j] as number)) < 1e-14 * (kb.index.scales[j] as number));
			});
		}
	});
});
