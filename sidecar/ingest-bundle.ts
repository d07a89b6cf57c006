import type { ChromaClient } from 'chromadb';
import { readBundle } from '../integration/bundle.ts';
import { syncChroma, type SyncResult } from '../integration/sync-chroma.ts';

/** What an ingest did. */
export interface IngestResult extends SyncResult {
	contentVersion: string;
	/** False when the collection already held this content version and `onlyIfChanged` was set. */
	changed: boolean;
}

/**
 * Loads a private bundle into a Chroma collection with its embeddings: upserts new and changed chunks, deletes
 * the ones the bundle no longer has, and stores the header as the collection's metadata. Chunks are written before
 * the stale ones go, so a sidecar serving meanwhile never finds a chunk id missing that the new kb.json names.
 */
export async function ingestBundle(options: {
	client: ChromaClient;
	collection: string;
	bundle: string;
	onlyIfChanged?: boolean;
}): Promise<IngestResult> {
	const { header, chunks } = await readBundle(options.bundle);
	if (options.onlyIfChanged) {
		const existing = await options.client.getCollection({ name: options.collection }).catch(() => undefined);
		if (existing?.metadata?.contentVersion === header.contentVersion) {
			return { contentVersion: header.contentVersion, changed: false, upserted: 0, deleted: 0, unchanged: chunks.length };
		}
	}
	const result = await syncChroma({ client: options.client, collection: options.collection, header, chunks });
	return { ...result, contentVersion: header.contentVersion, changed: true };
}
