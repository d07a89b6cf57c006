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
 * with progress in the log (done / total, chunks per second, time left).
 */
export async function embedChunks(
	texts: readonly string[],
	embedder: Embedder,
	cache: EmbeddingCache,
	logger: AstroIntegrationLogger,
): Promise<{ vectors: Float32Array[]; report: EmbedReport }> {
	const started = performance.now();
	const vectors: Float32Array[] = new Array(texts.length);
	const missing: number[] = [];
	texts.forEach((text, i) => {
		const cached = cache.get(text);
		if (cached && cached.length === embedder.dimension) vectors[i] = cached;
		else missing.push(i);
	});
	const reused = texts.length - missing.length;
	if (missing.length > 0) logger.info(`embedding ${missing.length} chunks (${reused} reused from the cache)`);

	let lastLog = performance.now();
	for (let start = 0; start < missing.length; start += step) {
		const batch = missing.slice(start, start + step);
		const embedded = await embedder.embedPassages(batch.map((i) => texts[i]!));
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
	return { vectors, report: { embedded: missing.length, reused, ms: performance.now() - started } };
}
