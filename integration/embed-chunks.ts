import type { AstroIntegrationLogger } from 'astro';
import type { Embedder } from './create-embedder.ts';
import type { EmbeddingCache } from './embedding-cache.ts';

/** Counts of {@link embedChunks}. */
export interface EmbedReport {
	embedded: number;
	reused: number;
	ms: number;
}

// Large enough to keep the model busy between progress lines, small enough that a line comes every few seconds.
const step = 64;
const progressEveryMs = 2000;

/**
 * Embeds texts as passages, taking what the cache already holds and embedding only the rest,
 * with progress in the log (done / total, chunks per second, time left). The model is loaded
 * through `embedder` only when something is missing, so a build whose every text is cached never loads it.
 */
export async function embedChunks(
	texts: readonly string[],
	embedder: () => Promise<Embedder>,
	cache: EmbeddingCache,
	logger: AstroIntegrationLogger,
): Promise<{ vectors: Float32Array[]; dimension: number; report: EmbedReport }> {
	const started = performance.now();
	const vectors = texts.map((text) => cache.get(text));
	const cachedWidth = vectors[0]?.length;
	// Cached vectors of one width came from the model the cache is keyed by; anything else needs the model's own width.
	const model = vectors.every((vector) => vector?.length === cachedWidth) && cachedWidth ? undefined : await embedder();
	const dimension = model?.dimension ?? cachedWidth!;
	const missing = texts.flatMap((_, i) => (vectors[i]?.length === dimension ? [] : [i]));
	const reused = texts.length - missing.length;
	if (missing.length > 0) logger.info(`embedding ${missing.length} chunks (${reused} reused from the cache)`);

	let lastLog = performance.now();
	for (let start = 0; start < missing.length; start += step) {
		const batch = missing.slice(start, start + step);
		const embedded = await model!.embedPassages(batch.map((i) => texts[i]!));
		batch.forEach((i, j) => {
			vectors[i] = embedded[j]!;
			cache.set(texts[i]!, embedded[j]!);
		});
		const done = start + batch.length;
		const now = performance.now();
		if (now - lastLog >= progressEveryMs && done < missing.length) {
			lastLog = now;
			const perSecond = done / ((now - started) / 1000);
			const left = Math.ceil((missing.length - done) / perSecond);
			logger.info(`${done} / ${missing.length} chunks, ${perSecond.toFixed(1)} chunks/s, about ${left} s left`);
		}
	}
	return { vectors: vectors as Float32Array[], dimension, report: { embedded: missing.length, reused, ms: performance.now() - started } };
}
