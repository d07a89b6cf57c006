// Browser-safe: the search island loads this module, so no node: imports and no Buffer.
// docs/kb-format.md is the specification this file implements.

import { createInt8Scorer, int8ScorerQueryLimit, type Int8Scorer } from './score-int8.ts';

/** Value of kb.json's "format" field; anything else is not a knowledge base this package wrote. */
export const KB_FORMAT = 'astro-concierge-kb';

/** The kb.json layout version this reader understands and the encoder writes. */
export const KB_VERSION = 1;

/** Value of "vectors.encoding": int8 residuals from a stored centroid, one float32 scale per vector. */
export const KB_VECTOR_ENCODING = 'int8-centered';

/** Embedding settings the browser must reproduce for the visitor's question, plus search defaults. */
export interface KbSettings {
	model: string;
	dtype: string;
	dimension: number;
	pooling: 'mean';
	normalize: true;
	queryPrefix: string;
	topK: number;
	maxDistance: number;
	contentVersion: string;
}

/** `[url, title]` of one page. */
export type KbArticleEntry = [url: string, title: string];

/** `[article index, n of the id "<url>#<n>", anchor, heading path]` of one chunk. */
export type KbChunkEntry = [article: number, n: number, anchor: string, heading: string];

/** kb.json exactly as written: every field there is, and nothing else. */
export interface KbFile extends KbSettings {
	format: typeof KB_FORMAT;
	version: typeof KB_VERSION;
	articles: KbArticleEntry[];
	chunks: KbChunkEntry[];
	vectors: { encoding: typeof KB_VECTOR_ENCODING; data: string };
}

/** One searchable section. The link to it is `url + '#' + anchor`, or just `url` when anchor is ''. */
export interface KbChunk {
	id: string;
	url: string;
	anchor: string;
	title: string;
	heading: string;
}

/**
 * Decoded vectors, laid out for scoring. Chunk j's stored vector is `centroid + scales[j] * codes[j*D .. j*D+D]`;
 * its cosine with a unit query q is `(q·centroid) * centroidWeight[j] + (q·codes_j) * codeWeight[j]`.
 */
export interface KbIndex {
	centroid: Float32Array;
	scales: Float32Array;
	/** All chunks' int8 components, chunk after chunk, in one buffer. */
	codes: Int8Array;
	/** 1 / ‖stored vector‖, so scores are cosines even though rounding moved the vector off unit length. */
	centroidWeight: Float64Array;
	/** scales[j] / ‖stored vector‖. */
	codeWeight: Float64Array;
}

/** A knowledge base ready to search: settings, chunk metadata in kb.json order, and the vector index. */
export interface Kb extends KbSettings {
	chunks: KbChunk[];
	index: KbIndex;
}

/** Overrides for one search; each defaults to the value kb.json carries. */
export interface KbSearchOptions {
	topK?: number;
	maxDistance?: number;
}

/** A chunk and its cosine distance (1 − cosine) from the query. */
export interface KbMatch {
	chunk: KbChunk;
	distance: number;
}

/**
 * Checks the settings fields of `source`, throwing `<where>: "<field>" ...` for the first wrong one.
 * Shared by the encoder and the reader so both refuse the same things with the same words.
 */
export function validateKbSettings(source: Record<string, unknown>, where: string): KbSettings {
	const field = (name: string): unknown => {
		if (!Object.hasOwn(source, name) || source[name] === undefined) throw new Error(`${where}: "${name}" is missing`);
		return source[name];
	};
	const nonEmptyString = (name: string): string => {
		const value = field(name);
		if (typeof value !== 'string' || value === '') throw new Error(`${where}: "${name}" must be a non-empty string`);
		return value;
	};
	const positiveInteger = (name: string): number => {
		const value = field(name);
		if (!Number.isSafeInteger(value) || (value as number) <= 0) {
			throw new Error(`${where}: "${name}" must be a positive integer`);
		}
		return value as number;
	};

	const model = nonEmptyString('model');
	const dtype = nonEmptyString('dtype');
	const dimension = positiveInteger('dimension');
	if (field('pooling') !== 'mean') throw new Error(`${where}: "pooling" must be "mean"`);
	if (field('normalize') !== true) throw new Error(`${where}: "normalize" must be true`);
	const queryPrefix = field('queryPrefix');
	if (typeof queryPrefix !== 'string') throw new Error(`${where}: "queryPrefix" must be a string`);
	const topK = positiveInteger('topK');
	const maxDistance = field('maxDistance');
	// Cosine distance lives in [0, 2]; a limit outside it is a mistake, not a setting.
	if (typeof maxDistance !== 'number' || !(maxDistance >= 0 && maxDistance <= 2)) {
		throw new Error(`${where}: "maxDistance" must be a number from 0 to 2`);
	}
	const contentVersion = nonEmptyString('contentVersion');
	return { model, dtype, dimension, pooling: 'mean', normalize: true, queryPrefix, topK, maxDistance, contentVersion };
}

/** Bytes of the vector block for `count` chunks: centroid, then the scales, then the int8 components. */
export function kbVectorBytes(count: number, dimension: number): number {
	return 4 * dimension + 4 * count + count * dimension;
}

/**
 * Parses and validates kb.json (its text, or the value JSON.parse gave), then decodes the vectors once.
 * Throws an Error that names the offending field, e.g. `kb.json: "dimension" must be a positive integer`.
 */
export function readKb(input: string | unknown): Kb {
	let value: unknown = input;
	if (typeof input === 'string') {
		try {
			value = JSON.parse(input);
		} catch (error) {
			throw new Error(`kb.json: not valid JSON (${(error as Error).message})`);
		}
	}
	if (!isRecord(value)) throw new Error('kb.json: must be a JSON object');

	if (value.format !== KB_FORMAT) {
		throw new Error(`kb.json: "format" must be "${KB_FORMAT}", got ${describe(value.format)}`);
	}
	if (value.version !== KB_VERSION) {
		throw new Error(`kb.json: "version" must be ${KB_VERSION} (the version this reader understands), got ${describe(value.version)}`);
	}
	const settings = validateKbSettings(value, 'kb.json');
	const chunks = readChunks(value);
	const index = readVectors(value, chunks.length, settings.dimension);
	return { ...settings, chunks, index };
}

function readChunks(file: Record<string, unknown>): KbChunk[] {
	const { articles, chunks } = file;
	if (!Array.isArray(articles)) throw new Error('kb.json: "articles" must be an array of [url, title]');
	// Ids are `url#n` and n holds no '#', so two ids are equal exactly when their urls and n are. Numbering each
	// url by its first article makes the check one number per chunk: a Set of 20,000 id strings measured 10–20 ms
	// in Chromium, most of reading the chunks.
	const firstWithUrl = new Map<string, number>();
	const urlNumber = new Int32Array(articles.length);
	for (let i = 0; i < articles.length; i++) {
		const entry: unknown = articles[i];
		if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || entry[0] === '' || typeof entry[1] !== 'string') {
			throw new Error(`kb.json: "articles[${i}]" must be [url, title] with a non-empty url`);
		}
		if (!firstWithUrl.has(entry[0])) firstWithUrl.set(entry[0], i);
		urlNumber[i] = firstWithUrl.get(entry[0]) as number;
	}
	if (!Array.isArray(chunks)) throw new Error('kb.json: "chunks" must be an array of [article, n, anchor, heading]');

	// Up to this n, url number + n · articles.length is a safe integer; beyond it the id itself is the key.
	const numberedUpTo = Math.floor((Number.MAX_SAFE_INTEGER - articles.length) / Math.max(1, articles.length));
	const keys = new Set<number | string>();
	const read = new Array<KbChunk>(chunks.length);
	for (let i = 0; i < chunks.length; i++) {
		const entry: unknown = chunks[i];
		if (!Array.isArray(entry) || entry.length !== 4) throw new Error(`${chunkField(i)} must be [article, n, anchor, heading]`);
		const article: unknown = entry[0];
		const n: unknown = entry[1];
		const anchor: unknown = entry[2];
		const heading: unknown = entry[3];
		if (!Number.isSafeInteger(article) || (article as number) < 0 || (article as number) >= articles.length) {
			const entries = articles.length === 1 ? '1 entry' : `${articles.length} entries`;
			throw new Error(`${chunkField(i, 0)} must be an index into "articles", which has ${entries}`);
		}
		if (!Number.isSafeInteger(n) || (n as number) < 0) throw new Error(`${chunkField(i, 1)} must be a non-negative integer`);
		if (typeof anchor !== 'string') throw new Error(`${chunkField(i, 2)} must be a string`);
		if (typeof heading !== 'string') throw new Error(`${chunkField(i, 3)} must be a string`);
		const page = articles[article as number] as KbArticleEntry;
		const id = `${page[0]}#${n as number}`;
		const key = (n as number) <= numberedUpTo ? (urlNumber[article as number] as number) + (n as number) * articles.length : id;
		if (keys.has(key)) throw new Error(`${chunkField(i)} repeats the id "${id}"`);
		keys.add(key);
		read[i] = { id, url: page[0], anchor, title: page[1], heading };
	}
	return read;
}

function chunkField(i: number, position?: number): string {
	return `kb.json: "chunks[${i}]${position === undefined ? '' : `[${position}]`}"`;
}

function readVectors(file: Record<string, unknown>, count: number, dimension: number): KbIndex {
	const { vectors } = file;
	if (!isRecord(vectors)) throw new Error('kb.json: "vectors" must be an object');
	if (vectors.encoding !== KB_VECTOR_ENCODING) {
		throw new Error(`kb.json: "vectors.encoding" must be "${KB_VECTOR_ENCODING}", got ${describe(vectors.encoding)}`);
	}
	if (typeof vectors.data !== 'string') throw new Error('kb.json: "vectors.data" must be a base64 string');

	// The codes are most of the file and scoring wants them in one buffer. Where the SIMD kernel runs, the block
	// is decoded straight into its memory, codes last, so they land where the kernel reads them without a copy.
	const leading = 4 * (dimension + count);
	const scorer = createInt8Scorer(count, dimension, leading);
	const block = scorer?.block ?? new Uint8Array(kbVectorBytes(count, dimension));
	decodeBlock(vectors.data, block, count, dimension);
	const codes = scorer?.codes ?? new Int8Array(block.buffer, block.byteOffset + leading, count * dimension);

	const view = new DataView(block.buffer, block.byteOffset, leading);
	const centroid = new Float32Array(dimension);
	for (let k = 0; k < dimension; k++) centroid[k] = view.getFloat32(4 * k, true);
	const scales = new Float32Array(count);
	for (let j = 0; j < count; j++) scales[j] = view.getFloat32(4 * (dimension + j), true);
	if (!centroid.every(Number.isFinite)) throw new Error('kb.json: "vectors.data" has a non-finite centroid component');
	scales.forEach((scale, j) => {
		if (!(scale >= 0 && scale < Infinity)) throw new Error(`kb.json: "vectors.data" has an invalid scale for chunks[${j}]`);
	});

	// ‖centroid + scale·code‖² = ‖c‖² + scale·(2·c·code + scale·Σcode²), so the N·D work is integer sums over the
	// codes, which the kernel does, and the JavaScript loop does to the same bits where the kernel is missing.
	const terms = scorer ? kernelNormTerms(scorer, centroid, count, dimension) : loopNormTerms(codes, centroid, count, dimension);
	let centroidSquares = 0;
	for (let k = 0; k < dimension; k++) centroidSquares += (centroid[k] as number) * (centroid[k] as number);
	const centroidWeight = new Float64Array(count);
	const codeWeight = new Float64Array(count);
	for (let j = 0; j < count; j++) {
		const scale = scales[j] as number;
		const centroidDot = (terms.high[j] as number) * terms.highUnit + (terms.low[j] as number) * terms.lowUnit;
		const squares = centroidSquares + scale * (2 * centroidDot + scale * (terms.squares[j] as number));
		const inverseNorm = squares > 0 ? 1 / Math.sqrt(squares) : 0;
		centroidWeight[j] = inverseNorm;
		codeWeight[j] = scale * inverseNorm;
	}
	const index: KbIndex = { centroid, scales, codes, centroidWeight, codeWeight };
	if (scorer) {
		const sums = scorer.absoluteSums();
		const errorWeight = new Float64Array(count);
		for (let j = 0; j < count; j++) errorWeight[j] = ((codeWeight[j] as number) * (sums[j] as number)) / 2;
		kernels.set(index, { scorer, errorWeight, candidates: new Int32Array(count) });
	}
	return index;
}

/**
 * Per chunk j, exact integers: `high[j]·highUnit + low[j]·lowUnit` is centroid · code_j, with the centroid
 * split into four integer limbs of `bits` bits each (c_k ≈ Σ limb_l[k] · unit · 2^(−l·bits)), small enough for
 * the kernel's int16 query. Four limbs keep about 4·bits (60 at D = 384) bits of the largest component, more than
 * the float64 sum they replace keeps; being integers, they come out the same on either path.
 */
interface NormTerms {
	high: Float64Array;
	low: Float64Array;
	highUnit: number;
	lowUnit: number;
	/** Σ code_j². */
	squares: Int32Array | Float64Array;
}

/** The centroid's four limbs (see {@link NormTerms}) and the weight of one unit of the first. */
function centroidLimbs(centroid: Float32Array, dimension: number): { limbs: Int16Array[]; bits: number; unit: number } {
	const limit = int8ScorerQueryLimit(dimension);
	// Each later limb is a remainder of at most half the previous unit, so 2^(bits − 1) ≤ limit keeps it in range.
	const bits = Math.floor(Math.log2(limit)) + 1;
	let largest = 0;
	for (let k = 0; k < dimension; k++) largest = Math.max(largest, Math.abs(centroid[k] as number));
	// A power of two, so the remainders below are exact: the first limb is at most `limit`.
	const unit = largest > 0 ? 2 ** Math.ceil(Math.log2(largest / limit)) : 1;
	const limbs = [0, 1, 2, 3].map(() => new Int16Array(dimension));
	for (let k = 0; k < dimension; k++) {
		let rest = centroid[k] as number;
		limbs.forEach((limb, l) => {
			const step = unit * 2 ** (-l * bits);
			limb[k] = Math.round(rest / step);
			rest -= (limb[k] as number) * step;
		});
	}
	return { limbs, bits, unit };
}

function kernelNormTerms(scorer: Int8Scorer, centroid: Float32Array, count: number, dimension: number): NormTerms {
	const { limbs, bits, unit } = centroidLimbs(centroid, dimension);
	const pair = (first: Int16Array, second: Int16Array): Float64Array => {
		const combined = new Float64Array(count);
		scorer.query.set(first);
		const firstDots = scorer.dots();
		for (let j = 0; j < count; j++) combined[j] = (firstDots[j] as number) * 2 ** bits;
		scorer.query.set(second);
		const secondDots = scorer.dots();
		for (let j = 0; j < count; j++) combined[j] = (combined[j] as number) + (secondDots[j] as number);
		return combined;
	};
	const high = pair(limbs[0] as Int16Array, limbs[1] as Int16Array);
	const low = pair(limbs[2] as Int16Array, limbs[3] as Int16Array);
	return { high, low, highUnit: unit * 2 ** -bits, lowUnit: unit * 2 ** (-3 * bits), squares: scorer.squares().slice() };
}

function loopNormTerms(codes: Int8Array, centroid: Float32Array, count: number, dimension: number): NormTerms {
	const { limbs, bits, unit } = centroidLimbs(centroid, dimension);
	// Two limbs at a time stay exact in float64: each sum is at most the kernel's int32 bound (128·D·limit < 2³¹)
	// times 2^bits + 1, below 2⁴⁷.
	const joined = (first: Int16Array, second: Int16Array) => Float64Array.from(first, (value, k) => value * 2 ** bits + (second[k] as number));
	const highLimbs = joined(limbs[0] as Int16Array, limbs[1] as Int16Array);
	const lowLimbs = joined(limbs[2] as Int16Array, limbs[3] as Int16Array);
	const high = new Float64Array(count);
	const low = new Float64Array(count);
	const squares = new Float64Array(count);
	for (let j = 0, row = 0; j < count; j++, row += dimension) {
		let highDot = 0;
		let lowDot = 0;
		let codeSquares = 0;
		for (let k = 0; k < dimension; k++) {
			const code = codes[row + k] as number;
			highDot += (highLimbs[k] as number) * code;
			lowDot += (lowLimbs[k] as number) * code;
			codeSquares += code * code;
		}
		high[j] = highDot;
		low[j] = lowDot;
		squares[j] = codeSquares;
	}
	return { high, low, highUnit: unit * 2 ** -bits, lowUnit: unit * 2 ** (-3 * bits), squares };
}

/**
 * What the SIMD path needs beyond KbIndex. Kept aside rather than in KbIndex, so a Kb put together by other
 * means (or copied field by field) is still valid and simply searched by the JavaScript loop.
 */
interface KbKernel {
	scorer: Int8Scorer;
	/**
	 * codeWeight[j] · Σ|code_j| / 2: with the query quantised in steps of `step`, each component is off by at
	 * most step / 2, so chunk j's approximate score is off by at most step · errorWeight[j].
	 */
	errorWeight: Float64Array;
	/** Scratch space for one search's candidate chunks; searches never overlap, JavaScript being single-threaded. */
	candidates: Int32Array;
}

const kernels = new WeakMap<KbIndex, KbKernel>();

// Covers the floating-point rounding of both the approximate and the exact score, which the bound above leaves out.
const ROUNDING_SLACK = 1e-10;

/** Chunk `index`'s vector as stored (centroid + scale × codes), before any renormalisation. */
export function decodeKbVector(kb: Kb, index: number): Float64Array {
	const { dimension } = kb;
	const { centroid, scales, codes } = kb.index;
	if (!Number.isSafeInteger(index) || index < 0 || index >= kb.chunks.length) {
		throw new RangeError(`decodeKbVector: no chunk at index ${index}`);
	}
	const scale = scales[index] as number;
	const vector = new Float64Array(dimension);
	for (let k = 0; k < dimension; k++) vector[k] = (centroid[k] as number) + scale * (codes[index * dimension + k] as number);
	return vector;
}

/**
 * The chunks closest to `query` (an embedding of the visitor's question, same model and settings), nearest
 * first: at most `topK`, none further than `maxDistance`, both defaulting to kb.json's values.
 */
export function searchKb(kb: Kb, query: Float32Array, options: KbSearchOptions = {}): KbMatch[] {
	const topK = options.topK ?? kb.topK;
	const maxDistance = options.maxDistance ?? kb.maxDistance;
	if (!Number.isSafeInteger(topK) || topK <= 0) throw new Error(`searchKb: topK must be a positive integer, got ${topK}`);
	if (typeof maxDistance !== 'number' || !(maxDistance >= 0)) {
		throw new Error(`searchKb: maxDistance must be a number ≥ 0, got ${maxDistance}`);
	}
	// `| 0` marks these as int32 for V8's optimiser; without it the scoring loop below measured about 1.5×
	// slower once other code had run first (seen in the tests), with the same results.
	const dimension = kb.dimension | 0;
	if (query.length !== dimension) {
		throw new Error(`searchKb: the query has ${query.length} components but kb.json vectors have ${dimension}`);
	}

	// Dividing by ‖q‖ once makes the result a true cosine even if the caller's vector is slightly off unit length.
	let squares = 0;
	for (let k = 0; k < dimension; k++) squares += (query[k] as number) * (query[k] as number);
	if (!(squares > 0 && squares < Infinity)) throw new Error('searchKb: the query vector must be non-zero and finite');
	const inverseNorm = 1 / Math.sqrt(squares);
	const q = new Float64Array(dimension);
	for (let k = 0; k < dimension; k++) q[k] = (query[k] as number) * inverseNorm;

	const { centroid, codes, centroidWeight, codeWeight } = kb.index;
	let queryDotCentroid = 0;
	for (let k = 0; k < dimension; k++) queryDotCentroid += (q[k] as number) * (centroid[k] as number);

	const count = kb.chunks.length | 0;
	const capacity = Math.min(topK, count);
	const heap = new TopScores(capacity);
	const minScore = 1 - maxDistance;
	// Below the weakest kept score a chunk cannot get in, so most chunks cost one comparison after scoring.
	let floor = minScore;
	const kernel = kernels.get(kb.index);
	if (kernel) {
		// The kernel scores every chunk approximately, with a bound on the error; only chunks whose bound reaches
		// the best lower bounds are scored exactly below, so the result is exactly that of the plain loop.
		const { scorer, errorWeight } = kernel;
		let largest = 0;
		for (let k = 0; k < dimension; k++) largest = Math.max(largest, Math.abs(q[k] as number));
		const step = largest / int8ScorerQueryLimit(dimension);
		const quantised = scorer.query;
		for (let k = 0; k < dimension; k++) quantised[k] = Math.round((q[k] as number) / step);
		const dots = scorer.dots();
		// One pass keeps the topK best lower bounds (at least topK chunks score that much, so nothing below the
		// weakest of them can be kept) and notes every chunk whose upper bound reaches the cut so far; the cut
		// only rises, so the chunks the final cut admits are among those noted.
		const lowerBounds = new TopScores(capacity);
		const noted = kernel.candidates;
		let notedCount = 0;
		let cut = minScore;
		for (let j = 0; j < count; j++) {
			const approximate = queryDotCentroid * (centroidWeight[j] as number) + (codeWeight[j] as number) * (step * (dots[j] as number));
			const error = step * (errorWeight[j] as number) + ROUNDING_SLACK;
			if (approximate + error < cut) continue;
			noted[notedCount++] = j;
			if (approximate - error >= cut) cut = Math.max(minScore, lowerBounds.offer(approximate - error, j));
		}
		for (let i = 0; i < notedCount; i++) {
			const j = noted[i] as number;
			const approximate = queryDotCentroid * (centroidWeight[j] as number) + (codeWeight[j] as number) * (step * (dots[j] as number));
			if (approximate + step * (errorWeight[j] as number) + ROUNDING_SLACK < cut) continue;
			const score = exactScore(q, codes, j * dimension, dimension, queryDotCentroid, centroidWeight[j] as number, codeWeight[j] as number);
			if (score >= floor) floor = Math.max(minScore, heap.offer(score, j));
		}
	} else {
		for (let j = 0, row = 0; j < count; j++, row += dimension) {
			const score = exactScore(q, codes, row, dimension, queryDotCentroid, centroidWeight[j] as number, codeWeight[j] as number);
			if (score >= floor) floor = Math.max(minScore, heap.offer(score, j));
		}
	}

	const matches: KbMatch[] = [];
	for (const [score, index] of heap.drain()) {
		const distance = 1 - score;
		// The score test above and this one round differently; the distance is what the caller was promised.
		if (distance <= maxDistance) matches.push({ chunk: kb.chunks[index] as KbChunk, distance: Math.max(0, distance) });
	}
	return matches;
}

/** Chunk j's cosine with the unit query: the one definition both search paths use, so they agree to the bit. */
function exactScore(
	q: Float64Array,
	codes: Int8Array,
	row: number,
	dimension: number,
	queryDotCentroid: number,
	centroidWeight: number,
	codeWeight: number,
): number {
	// One running sum measured as fast as unrolled variants in V8, and stays simple.
	let dot = 0;
	for (let k = 0; k < dimension; k++) dot += (q[k] as number) * (codes[row + k] as number);
	return queryDotCentroid * centroidWeight + codeWeight * dot;
}

// Keeps the best `capacity` scores seen, as a min-heap so the weakest kept score is at the root and
// most chunks are rejected by one comparison; full sorting is left for the few survivors.
class TopScores {
	readonly #scores: Float64Array;
	readonly #indices: Int32Array;
	#size = 0;

	constructor(capacity: number) {
		this.#scores = new Float64Array(capacity);
		this.#indices = new Int32Array(capacity);
	}

	/** Keeps the entry if it is among the best so far; returns the weakest kept score once full, else -Infinity. */
	offer(score: number, index: number): number {
		const scores = this.#scores;
		const indices = this.#indices;
		const capacity = scores.length;
		if (capacity === 0) return Infinity;
		let at: number;
		if (this.#size < capacity) {
			at = this.#size++;
			while (at > 0) {
				const parent = (at - 1) >> 1;
				if (!this.#worse(score, index, scores[parent] as number, indices[parent] as number)) break;
				scores[at] = scores[parent] as number;
				indices[at] = indices[parent] as number;
				at = parent;
			}
		} else {
			if (!this.#worse(scores[0] as number, indices[0] as number, score, index)) return scores[0] as number;
			at = 0;
			for (;;) {
				let child = 2 * at + 1;
				if (child >= capacity) break;
				const right = child + 1;
				if (
					right < capacity &&
					this.#worse(scores[right] as number, indices[right] as number, scores[child] as number, indices[child] as number)
				) {
					child = right;
				}
				if (!this.#worse(scores[child] as number, indices[child] as number, score, index)) break;
				scores[at] = scores[child] as number;
				indices[at] = indices[child] as number;
				at = child;
			}
		}
		scores[at] = score;
		indices[at] = index;
		return this.#size === capacity ? (scores[0] as number) : -Infinity;
	}

	/** Kept entries as [score, index], best first; equal scores keep kb.json order so results are stable. */
	drain(): Array<[number, number]> {
		const entries: Array<[number, number]> = [];
		for (let i = 0; i < this.#size; i++) entries.push([this.#scores[i] as number, this.#indices[i] as number]);
		entries.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
		return entries;
	}

	#worse(scoreA: number, indexA: number, scoreB: number, indexB: number): boolean {
		return scoreA < scoreB || (scoreA === scoreB && indexA > indexB);
	}
}

/** Decodes `text` into `block`, refusing anything that is not base64 of exactly `block.length` bytes. */
function decodeBlock(text: string, block: Uint8Array, count: number, dimension: number): void {
	// Native where the engine has it (Chromium 140+, Firefox 133+, Safari 18.2+), and straight into place:
	// several times faster in Chromium than atob, and than Uint8Array.fromBase64, which allocates a buffer.
	const decodeInto = (block as { setFromBase64?: (text: string) => { read: number; written: number } }).setFromBase64;
	if (decodeInto) {
		let decoded: { read: number; written: number };
		try {
			decoded = decodeInto.call(block, text);
		} catch {
			throw new Error('kb.json: "vectors.data" is not valid base64');
		}
		if (decoded.read === text.length && decoded.written === block.length) return;
		// It stops when the block is full: the data is too short or too long, or only whitespace follows, and
		// the full decoding below tells which.
	}
	let binary: string;
	try {
		binary = atob(text);
	} catch {
		throw new Error('kb.json: "vectors.data" is not valid base64');
	}
	if (binary.length !== block.length) {
		throw new Error(
			`kb.json: "vectors.data" holds ${binary.length} bytes; ${count} chunks at dimension ${dimension} need ${block.length}`,
		);
	}
	for (let i = 0; i < binary.length; i++) block[i] = binary.charCodeAt(i);
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
	if (value === undefined) return 'nothing';
	const text = JSON.stringify(value);
	return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
