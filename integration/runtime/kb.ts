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
	articles.forEach((entry: unknown, i) => {
		if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || entry[0] === '' || typeof entry[1] !== 'string') {
			throw new Error(`kb.json: "articles[${i}]" must be [url, title] with a non-empty url`);
		}
	});
	if (!Array.isArray(chunks)) throw new Error('kb.json: "chunks" must be an array of [article, n, anchor, heading]');

	const ids = new Set<string>();
	return chunks.map((entry: unknown, i): KbChunk => {
		const at = (position?: number): string => `kb.json: "chunks[${i}]${position === undefined ? '' : `[${position}]`}"`;
		if (!Array.isArray(entry) || entry.length !== 4) throw new Error(`${at()} must be [article, n, anchor, heading]`);
		const [article, n, anchor, heading] = entry as unknown[];
		if (!Number.isSafeInteger(article) || (article as number) < 0 || (article as number) >= articles.length) {
			const entries = articles.length === 1 ? '1 entry' : `${articles.length} entries`;
			throw new Error(`${at(0)} must be an index into "articles", which has ${entries}`);
		}
		if (!Number.isSafeInteger(n) || (n as number) < 0) throw new Error(`${at(1)} must be a non-negative integer`);
		if (typeof anchor !== 'string') throw new Error(`${at(2)} must be a string`);
		if (typeof heading !== 'string') throw new Error(`${at(3)} must be a string`);
		const [url, title] = articles[article as number] as KbArticleEntry;
		const id = `${url}#${n as number}`;
		if (ids.has(id)) throw new Error(`${at()} repeats the id "${id}"`);
		ids.add(id);
		return { id, url, anchor, title, heading };
	});
}

function readVectors(file: Record<string, unknown>, count: number, dimension: number): KbIndex {
	const { vectors } = file;
	if (!isRecord(vectors)) throw new Error('kb.json: "vectors" must be an object');
	if (vectors.encoding !== KB_VECTOR_ENCODING) {
		throw new Error(`kb.json: "vectors.encoding" must be "${KB_VECTOR_ENCODING}", got ${describe(vectors.encoding)}`);
	}
	if (typeof vectors.data !== 'string') throw new Error('kb.json: "vectors.data" must be a base64 string');

	const bytes = decodeBase64(vectors.data);
	const expected = kbVectorBytes(count, dimension);
	if (bytes.length !== expected) {
		throw new Error(
			`kb.json: "vectors.data" holds ${bytes.length} bytes; ${count} chunks at dimension ${dimension} need ${expected}`,
		);
	}

	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const centroid = new Float32Array(dimension);
	for (let k = 0; k < dimension; k++) centroid[k] = view.getFloat32(4 * k, true);
	const scales = new Float32Array(count);
	for (let j = 0; j < count; j++) scales[j] = view.getFloat32(4 * (dimension + j), true);
	// The codes are most of the file and scoring wants them in one buffer: a view of the decoded bytes, or,
	// where the SIMD kernel runs, one copy into the kernel's memory, which then serves both paths.
	const stored = new Int8Array(bytes.buffer, bytes.byteOffset + 4 * (dimension + count), count * dimension);
	const scorer = createInt8Scorer(count, dimension);
	scorer?.codes.set(stored);
	const codes = scorer?.codes ?? stored;

	if (!centroid.every(Number.isFinite)) throw new Error('kb.json: "vectors.data" has a non-finite centroid component');
	const centroidWeight = new Float64Array(count);
	const codeWeight = new Float64Array(count);
	for (let j = 0; j < count; j++) {
		const scale = scales[j] as number;
		if (!(scale >= 0 && scale < Infinity)) throw new Error(`kb.json: "vectors.data" has an invalid scale for chunks[${j}]`);
		let squares = 0;
		for (let k = 0, at = j * dimension; k < dimension; k++, at++) {
			const component = (centroid[k] as number) + scale * (codes[at] as number);
			squares += component * component;
		}
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

function decodeBase64(text: string): Uint8Array {
	// Native where the engine has it (Chromium 140+, Firefox 133+, Safari 18.2+): several times faster than atob.
	const native = (Uint8Array as { fromBase64?: (text: string) => Uint8Array }).fromBase64;
	if (native) {
		try {
			return native(text);
		} catch {
			throw new Error('kb.json: "vectors.data" is not valid base64');
		}
	}
	let binary: string;
	try {
		binary = atob(text);
	} catch {
		throw new Error('kb.json: "vectors.data" is not valid base64');
	}
	const bytes = new Uint8Array(binary.length);
	for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
	return bytes;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
	if (value === undefined) return 'nothing';
	const text = JSON.stringify(value);
	return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
