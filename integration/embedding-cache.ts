import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './write-file-atomic.ts';

/** Vectors of texts already embedded by one model, kept between builds. */
export interface EmbeddingCache {
	/** The cache file. */
	readonly path: string;
	get(text: string): Float32Array | undefined;
	set(text: string, vector: Float32Array): void;
	/** Writes the entries used since opening; entries of texts no longer embedded are dropped, so the file never grows stale. */
	save(): Promise<void>;
}

interface CacheFile {
	format: 'astro-concierge/embedding-cache';
	version: 1;
	model: string;
	entries: Record<string, string>;
}

/**
 * Opens the cache of one model: `modelKey` names everything that changes a vector (model identity,
 * weights fingerprint, dtype, pooling), so a changed model can never serve old vectors.
 * A missing or unreadable cache file is an empty cache: it only ever costs time.
 */
export async function openEmbeddingCache(options: { dir: string; modelKey: string }): Promise<EmbeddingCache> {
	const name = createHash('sha256').update(options.modelKey).digest('hex').slice(0, 16);
	const path = join(options.dir, `embeddings-${name}.json`);
	const stored = new Map<string, string>();
	try {
		const file = JSON.parse(await readFile(path, 'utf8')) as CacheFile;
		if (file.format === 'astro-concierge/embedding-cache' && file.version === 1 && file.model === options.modelKey) {
			for (const [key, value] of Object.entries(file.entries)) stored.set(key, value);
		}
	} catch {
		// No cache yet, or one from an interrupted or older build.
	}
	const used = new Map<string, string>();
	const keyOf = (text: string) => createHash('sha256').update(text).digest('base64url');
	return {
		path,
		get(text) {
			const key = keyOf(text);
			const value = used.get(key) ?? stored.get(key);
			if (value === undefined) return undefined;
			used.set(key, value);
			const bytes = Buffer.from(value, 'base64');
			return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
		},
		set(text, vector) {
			used.set(keyOf(text), Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'));
		},
		async save() {
			const file: CacheFile = {
				format: 'astro-concierge/embedding-cache',
				version: 1,
				model: options.modelKey,
				entries: Object.fromEntries(used),
			};
			await writeFileAtomic(path, JSON.stringify(file));
		},
	};
}
