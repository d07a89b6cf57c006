// Ranking fidelity of kb.json against full precision, shared by kb.json's tests (which assert it) and the
// benchmarks (which publish it).
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { encodeKb } from '../../integration/encode-kb.ts';
import { decodeKbVector, readKb, type Kb, type KbSearchOptions } from '../../integration/runtime/kb.ts';
import { e5LikeSource, meanPairwiseCosine, randomUnit, withMetadata } from './kb-vectors.ts';
import { seededRandom } from './seeded-random.ts';

export type VectorKind = 'random unit' | 'e5-like';

/** How closely the compact ranking follows the full-precision one, over fresh queries. */
export interface Fidelity {
	kind: VectorKind;
	chunks: number;
	queries: number;
	/** Mean pairwise cosine of 300 of the chunk vectors. */
	meanCosine: number;
	/** Share of each query's exact top 10 found inside the compact top 20. */
	within20: number;
	/** Share of each query's exact top 10 found inside the compact top 10. */
	overlap10: number;
	/** Fewest of a query's exact top 10 in its compact top 10. */
	worstTop10: number;
	/** Largest distance between an original unit vector and its decoded one, renormalised. */
	epsilon: number;
	/** Queries whose exact top 10 could not be certified from the candidates and needed a full scan. */
	fullScans: number;
}

// Exact cosines are computed for this many compact-ranked candidates; see certifiedTop10.
const CANDIDATES = 200;

/**
 * Encodes `chunks` generated vectors of `kind`, searches them with `queries` fresh vectors from the same
 * distribution (never one of the chunks), and compares each compact top 10 and 20 with the exact top 10.
 * Every 50th query is also scanned in full, checking the certificate that spares the others a full scan.
 */
export async function measureFidelity(kind: VectorKind, chunks: number, queries: number, seed: number): Promise<Fidelity> {
	const random = seededRandom(seed);
	const next = kind === 'e5-like' ? e5LikeSource(random) : () => randomUnit(random);
	const vectors = Array.from({ length: chunks }, next);
	const questions = Array.from({ length: queries }, next);
	const meanCosine = meanPairwiseCosine(vectors.slice(0, 300));

	const text = encodeKb(withMetadata(vectors, random));
	const searched = searchInWorkers(text, questions, { topK: CANDIDATES, maxDistance: 2 });
	const kb = readKb(text);
	const exact = new ExactIndex(vectors);
	const epsilon = largestDecodingError(kb, exact);
	const position = new Map(kb.chunks.map((chunk, j) => [chunk.id, j]));
	const results = await searched;

	let inTop20 = 0;
	let inTop10 = 0;
	let worstTop10 = 10;
	let fullScans = 0;
	questions.forEach((query, q) => {
		const compact = results[q] as WorkerMatch[];
		const compactOrder = compact.map(([id]) => position.get(id) as number);
		let truth = certifiedTop10(exact, query, compactOrder, (compact.at(-1) as WorkerMatch)[1], epsilon);
		if (truth === null || q % 50 === 0) {
			const scanned = exact.top10(query);
			if (truth !== null && truth.join() !== scanned.join()) {
				throw new Error(`measureFidelity: the certified top 10 of query ${q} (${truth}) is not the scanned one (${scanned})`);
			}
			if (truth === null) fullScans++;
			truth = scanned;
		}
		const top20 = new Set(compactOrder.slice(0, 20));
		const top10 = new Set(compactOrder.slice(0, 10));
		const kept10 = truth.filter((j) => top10.has(j)).length;
		inTop20 += truth.filter((j) => top20.has(j)).length;
		inTop10 += kept10;
		worstTop10 = Math.min(worstTop10, kept10);
	});
	return {
		kind,
		chunks,
		queries,
		meanCosine,
		within20: inTop20 / (10 * queries),
		overlap10: inTop10 / (10 * queries),
		worstTop10,
		epsilon,
		fullScans,
	};
}

/** `[chunk id, distance]` of one searchKb match, as a worker sends it back. */
export type WorkerMatch = [id: string, distance: number];

// Plain JavaScript, run as a worker: it loads the real kb.ts, reads kb.json and searches its share of the queries.
const SEARCH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.kbModule).then(({ readKb, searchKb }) => {
	const kb = readKb(workerData.text);
	parentPort.postMessage(workerData.queries.map((query) =>
		searchKb(kb, query, workerData.options).map((match) => [match.chunk.id, match.distance])));
});
`;

/**
 * searchKb for every query, split across worker threads. A thousand queries over 20,000 chunks is
 * billions of int8 multiply-adds; on a two-core machine two threads halve the wait.
 */
export async function searchInWorkers(text: string, queries: Float32Array[], options: KbSearchOptions): Promise<WorkerMatch[][]> {
	const threads = Math.max(1, Math.min(4, availableParallelism()));
	const share = Math.ceil(queries.length / threads);
	const kbModule = new URL('../../integration/runtime/kb.ts', import.meta.url).href;
	const parts = await Promise.all(
		Array.from({ length: threads }, (_, i) =>
			new Promise<WorkerMatch[][]>((resolve, reject) => {
				const workerData = { kbModule, text, options, queries: queries.slice(i * share, (i + 1) * share) };
				const worker = new Worker(SEARCH_WORKER, { eval: true, workerData });
				worker.once('message', resolve);
				worker.once('error', reject);
				worker.once('exit', (code) => reject(new Error(`search worker exited with code ${code} before answering`)));
			}),
		),
	);
	return parts.flat();
}

/** Original vectors, unit-normalised in float64, for exact cosines. */
export class ExactIndex {
	readonly dimension: number;
	readonly count: number;
	readonly values: Float64Array;

	constructor(vectors: Float32Array[]) {
		this.count = vectors.length;
		this.dimension = vectors[0]?.length ?? 0;
		this.values = new Float64Array(this.count * this.dimension);
		vectors.forEach((vector, j) => {
			let squares = 0;
			for (const value of vector) squares += value * value;
			const inverse = 1 / Math.sqrt(squares);
			for (let k = 0; k < this.dimension; k++) this.values[j * this.dimension + k] = (vector[k] as number) * inverse;
		});
	}

	score(query: Float64Array, j: number): number {
		let dot = 0;
		for (let k = 0, at = j * this.dimension; k < this.dimension; k++, at++) dot += (query[k] as number) * (this.values[at] as number);
		return dot;
	}

	/** Exact top 10 by brute force, best first. */
	top10(query: Float32Array): number[] {
		const q = unitQuery(query);
		const best: Array<{ j: number; score: number }> = [];
		for (let j = 0; j < this.count; j++) {
			const score = this.score(q, j);
			if (best.length === 10 && score <= (best[9] as { score: number }).score) continue;
			let at = best.length;
			while (at > 0 && (best[at - 1] as { score: number }).score < score) at--;
			best.splice(at, 0, { j, score });
			if (best.length > 10) best.pop();
		}
		return best.map((entry) => entry.j);
	}
}

function unitQuery(query: Float32Array): Float64Array {
	let squares = 0;
	for (const value of query) squares += value * value;
	return Float64Array.from(query, (value) => value / Math.sqrt(squares));
}

function bestTen(indices: number[], score: (j: number) => number): number[] {
	return indices.sort((a, b) => score(b) - score(a) || a - b).slice(0, 10);
}

/**
 * The exact top 10 without scanning everything, or null when that cannot be proven. For a unit query q,
 * |exact(j) − compact(j)| = |q·(v_j − v̂_j)| ≤ ‖v_j − v̂_j‖ ≤ ε (both vectors unit length), so a chunk outside
 * the compact candidates scores exactly at most compact(last candidate) + ε. If the 10th best exact score
 * among the candidates beats that, no outsider can be in the exact top 10.
 */
function certifiedTop10(
	exact: ExactIndex,
	query: Float32Array,
	compactOrder: number[],
	lastCompactDistance: number,
	epsilon: number,
): number[] | null {
	const q = unitQuery(query);
	const scores = new Map(compactOrder.map((j) => [j, exact.score(q, j)]));
	const top = bestTen([...compactOrder], (j) => scores.get(j) as number);
	const tenth = scores.get(top[9] as number) as number;
	const outsiderBound = 1 - lastCompactDistance + epsilon + 1e-9;
	return tenth > outsiderBound ? top : null;
}

/** ε: the largest distance between an original unit vector and its decoded vector brought back to unit length. */
function largestDecodingError(kb: Kb, exact: ExactIndex): number {
	let largest = 0;
	kb.chunks.forEach((_, j) => {
		const decoded = decodeKbVector(kb, j);
		let squares = 0;
		for (const value of decoded) squares += value * value;
		const inverse = 1 / Math.sqrt(squares);
		let error = 0;
		for (let k = 0; k < kb.dimension; k++) {
			error += ((decoded[k] as number) * inverse - (exact.values[j * kb.dimension + k] as number)) ** 2;
		}
		largest = Math.max(largest, Math.sqrt(error));
	});
	return largest;
}

