import { createHash } from 'node:crypto';
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
 * Makes a collection hold exactly the given chunks: upserts new and changed ones, deletes ids the bundle no longer
 * has, and stores the bundle header as the collection's metadata. The collection uses cosine distance, which
 * Chroma does not default to. While it changes, the collection names no content version, so no sidecar trusts a
 * kb.json's ids against half-updated text; a different model, dtype or dimension starts the collection afresh,
 * since Chroma refuses vectors of another size and old vectors would not compare with new ones.
 */
export async function syncChroma(options: {
	client: ChromaClient;
	collection: string;
	header: BundleHeader;
	chunks: readonly BundleChunk[];
}): Promise<SyncResult> {
	const { client, header, chunks } = options;
	let collection = await openCollection(client, options.collection);
	const metadata = collection.metadata ?? {};
	const sameModel =
		metadata.model === header.model && metadata.dtype === header.dtype && metadata.dimension === header.dimension;
	if (!sameModel && (await collection.count()) > 0) {
		await client.deleteCollection({ name: options.collection });
		collection = await openCollection(client, options.collection);
	}
	await collection.modify({ metadata: { ...header, contentVersion: 'updating' } });
	const stored = await storedHashes(collection);

	const hashes = new Map(chunks.map((chunk) => [chunk.id, chunkHash(chunk)]));
	const changed = chunks.filter((chunk) => stored.get(chunk.id) !== hashes.get(chunk.id));
	for (let start = 0; start < changed.length; start += batchSize) {
		const batch = changed.slice(start, start + batchSize);
		await collection.upsert({
			ids: batch.map((chunk) => chunk.id),
			documents: batch.map((chunk) => chunk.text),
			embeddings: batch.map((chunk) => chunk.embedding),
			metadatas: batch.map((chunk) => ({ ...chunk.metadata, chunkHash: hashes.get(chunk.id)! })),
		});
	}
	const stale = [...stored.keys()].filter((id) => !hashes.has(id));
	for (let start = 0; start < stale.length; start += batchSize) {
		await collection.delete({ ids: stale.slice(start, start + batchSize) });
	}
	await collection.modify({ metadata: { ...header } });
	return { upserted: changed.length, deleted: stale.length, unchanged: chunks.length - changed.length };
}

function openCollection(client: ChromaClient, name: string): Promise<Collection> {
	return client.getOrCreateCollection({ name, configuration: { hnsw: { space: 'cosine' } }, embeddingFunction: null });
}

/** Everything Chroma stores of a chunk, so a chunk id reused for other text or another vector is always rewritten. */
function chunkHash(chunk: BundleChunk): string {
	const hash = createHash('sha256').update(JSON.stringify([chunk.text, chunk.metadata]));
	hash.update(new Uint8Array(Float32Array.from(chunk.embedding).buffer));
	return hash.digest('base64url');
}

async function storedHashes(collection: Collection): Promise<Map<string, unknown>> {
	const hashes = new Map<string, unknown>();
	for (let offset = 0; ; offset += 1000) {
		const page = await collection.get({ include: ['metadatas'], limit: 1000, offset });
		page.ids.forEach((id, i) => hashes.set(id, page.metadatas[i]?.chunkHash));
		if (page.ids.length < 1000) return hashes;
	}
}
