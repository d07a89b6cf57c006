// Generated knowledge bases for the kb.json benchmarks, from the same generators kb.json's tests use.
import type { KbInput } from '../../integration/encode-kb.ts';
import type { VectorKind } from '../helpers/kb-fidelity.ts';
import { e5LikeSource, randomUnit, withMetadata } from '../helpers/kb-vectors.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

/** A knowledge base of `chunks` generated vectors and `queries` fresh ones from the same distribution. */
export function generateCorpus(kind: VectorKind, chunks: number, queries: number, seed: number): { input: KbInput; queries: Float32Array[] } {
	const random = seededRandom(seed);
	const next = kind === 'e5-like' ? e5LikeSource(random) : () => randomUnit(random);
	const vectors = Array.from({ length: chunks }, next);
	return { input: withMetadata(vectors, random), queries: Array.from({ length: queries }, next) };
}
