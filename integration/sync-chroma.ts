import { ChromaClient, type Collection } from 'chromadb';
import type { BundleChunk, BundleHeader } from './bundle.ts';

/** What a sync changed. */
export interface SyncResult {
	upserted: number;
	deleted: number;
	unchanged: number;
}

const batchSize = 256;

/** Connects to a Chroma server by URL, failing with the URL and the reason when it does not answer. */
export async function connectChroma(url: string): Promise<ChromaClient> {
	const { hostname, port, protocol } = new URL(url);
	const client = new ChromaClient({
		host: hostname.replace(/^\[|\]$/g, ''),
		port: port ? Number(port) : protocol === 'https:' ? 443 : 80,
		ssl: protocol === 'https:',
	});
	try {
		await client.heartbeat();
	} catch (error) {
		throw new Error(`Chroma at ${url} is unreachable: ${(error as Error).message}`, { cause: error });
	}
	return client;
}

/**
 * Makes a collection hold exactly the given chunks: upserts new and changed ones (an article whose hash,
 * or a model whose name or dtype, changed), deletes ids the bundle no longer has, and stores the bundle header
 * as the collection's metadata. The collection uses cosine distance, which Chroma does not default to.
 */
export async function syncChroma(options: {
	client: ChromaClient;
	collection: string;
	header: BundleHeader;
	chunks: readonly BundleChunk[];
}): Promise<SyncResult> {
	const { client, header, chunks } = options;
	const collection = await client.getOrCreateCollection({
		name: options.collection,
		configuration: { hnsw: { space: 'cosine' } },
		embeddingFunction: null,
	});
	const sameModel = collection.metadata?.model === header.model && collection.metadata?.dtype === header.dtype;
	const stored = await storedHashes(collection);

	const changed = chunks.filter((chunk) => !sameModel || stored.get(chunk.id) !== chunk.metadata.articleHash);
	for (let start = 0; start < changed.length; start += batchSize) {
		const batch = changed.slice(start, start + batchSize);
		await collection.upsert({
			ids: batch.map((chunk) => chunk.id),
			documents: batch.map((chunk) => chunk.text),
			embeddings: batch.map((chunk) => chunk.embedding),
			metadatas: batch.map((chunk) => ({ ...chunk.metadata })),
		});
	}
	const keep = new Set(chunks.map((chunk) => chunk.id));
	const stale = [...stored.keys()].filter((id) => !keep.has(id));
	for (let start = 0; start < stale.length; start += batchSize) {
		await collection.delete({ ids: stale.slice(start, start + batchSize) });
	}
	await collection.modify({ metadata: { ...header } });
	return { upserted: changed.length, deleted: stale.length, unchanged: chunks.length - changed.length };
}

async function storedHashes(collection: Collection): Promise<Map<string, unknown>> {
	const hashes = new Map<string, unknown>();
	for (let offset = 0; ; offset += 1000) {
		const page = await collection.get({ include: ['metadatas'], limit: 1000, offset });
		page.ids.forEach((id, i) => hashes.set(id, page.metadatas[i]?.articleHash));
		if (page.ids.length < 1000) return hashes;
	}
}
