import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArticleChunk } from './chunk-article.ts';
import type { ParsedArticle } from './parse-article.ts';
import type { PageHeading } from './read-page-headings.ts';
import { writeFileAtomic } from './write-file-atomic.ts';

/** Values kept between builds under keys that name everything they were made from. */
export interface CacheSection<T> {
	get(key: string): T | undefined;
	set(key: string, value: T): void;
}

/**
 * What one model's builds reuse: vectors of texts it embedded, and the steps before embedding that are slow
 * to repeat for every unchanged article: parsing it, reading its built page's headings, chunking it with the model's tokenizer.
 */
export interface EmbeddingCache {
	/** The cache file. */
	readonly path: string;
	get(text: string): Float32Array | undefined;
	set(text: string, vector: Float32Array): void;
	readonly articles: CacheSection<ParsedArticle>;
	readonly pages: CacheSection<PageHeading[]>;
	readonly chunks: CacheSection<ArticleChunk[]>;
	/** Writes the entries used since opening; entries no longer used are dropped, so the file never grows stale. */
	save(): Promise<void>;
}

interface CacheFile {
	format: 'astro-concierge/embedding-cache';
	version: 2;
	model: string;
	entries: Record<string, string>;
	articles: Record<string, ParsedArticle>;
	pages: Record<string, PageHeading[]>;
	chunks: Record<string, ArticleChunk[]>;
}

const sections = ['entries', 'articles', 'pages', 'chunks'] as const;

/**
 * Opens the cache of one model: `modelKey` names everything that changes a vector (model identity,
 * weights fingerprint, dtype, pooling), so a changed model can never serve old vectors.
 * A missing or unreadable cache file is an empty cache: it only ever costs time.
 */
export async function openEmbeddingCache(options: { dir: string; modelKey: string }): Promise<EmbeddingCache> {
	const name = createHash('sha256').update(options.modelKey).digest('hex').slice(0, 16);
	const path = join(options.dir, `embeddings-${name}.json`);
	let stored: Partial<CacheFile> = {};
	try {
		const file = JSON.parse(await readFile(path, 'utf8')) as CacheFile;
		if (
			file.format === 'astro-concierge/embedding-cache' &&
			file.version === 2 &&
			file.model === options.modelKey &&
			sections.every((section) => isRecord(file[section]))
		) {
			stored = file;
		}
	} catch {
		// No cache yet, or one from an interrupted or older build.
	}
	const used: { [K in (typeof sections)[number]]: Map<string, CacheFile[K][string]> } = {
		entries: new Map(),
		articles: new Map(),
		pages: new Map(),
		chunks: new Map(),
	};
	const section = <K extends (typeof sections)[number]>(name: K): CacheSection<CacheFile[K][string]> => {
		const kept = used[name] as Map<string, CacheFile[K][string]>;
		const old = (stored[name] ?? {}) as Record<string, CacheFile[K][string]>;
		return {
			get(key) {
				const value = kept.get(key) ?? (Object.hasOwn(old, key) ? old[key] : undefined);
				if (value !== undefined) kept.set(key, value);
				return value;
			},
			set(key, value) {
				kept.set(key, value);
			},
		};
	};
	const entries = section('entries');
	const keyOf = (text: string) => createHash('sha256').update(text).digest('base64url');
	return {
		path,
		get(text) {
			const value = entries.get(keyOf(text));
			if (value === undefined) return undefined;
			const bytes = Buffer.from(value, 'base64');
			return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
		},
		set(text, vector) {
			entries.set(keyOf(text), Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'));
		},
		articles: section('articles'),
		pages: section('pages'),
		chunks: section('chunks'),
		async save() {
			const file: CacheFile = {
				format: 'astro-concierge/embedding-cache',
				version: 2,
				model: options.modelKey,
				entries: Object.fromEntries(used.entries),
				articles: Object.fromEntries(used.articles),
				pages: Object.fromEntries(used.pages),
				chunks: Object.fromEntries(used.chunks),
			};
			await writeFileAtomic(path, JSON.stringify(file));
		},
	};
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}
