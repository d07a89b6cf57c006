import type { ChromaClient, Collection } from 'chromadb';

/** A chunk fetched from Chroma, ready to put in a prompt. */
export interface Context {
	id: string;
	title: string;
	/** Page URL with the section anchor. */
	url: string;
	text: string;
	/** Cosine distance from the question, when found by search. */
	distance?: number;
}

/** What the bundle header stored as collection metadata: how the chunks were embedded. */
export interface KnowledgeBaseInfo {
	contentVersion: string | null;
	model: string | null;
	dtype: string | null;
	queryPrefix: string;
	topK: number | null;
	maxDistance: number | null;
}

/** The sidecar's view of the Chroma collection the build or `ingest` filled. */
export interface KnowledgeBase {
	/** Reads the collection's metadata again (after an ingest, say). */
	info(): Promise<KnowledgeBaseInfo>;
	/** Fetches chunks by id in the order asked for, dropping ids the collection does not have. */
	byIds(ids: readonly string[]): Promise<Context[]>;
	/** The nearest chunks to a query embedding, at most topK and within maxDistance. */
	search(embedding: Float32Array, options: { topK: number; maxDistance: number }): Promise<Context[]>;
	/** Whether Chroma answers right now. */
	reachable(): Promise<boolean>;
}

/** Opens a collection lazily, so a sidecar started before its first ingest finds it once it exists. */
export function openKnowledgeBase(client: ChromaClient, name: string): KnowledgeBase {
	let collection: Collection | undefined;
	const open = async () => (collection ??= await client.getCollection({ name, embeddingFunction: undefined }));
	const toContext = (id: string, text: string | null, metadata: Record<string, unknown> | null, distance?: number): Context => {
		const url = String(metadata?.url ?? '');
		const anchor = String(metadata?.anchor ?? '');
		return {
			id,
			title: String(metadata?.title ?? ''),
			url: anchor ? `${url}#${anchor}` : url,
			text: text ?? '',
			...(distance === undefined ? {} : { distance }),
		};
	};
	return {
		async info() {
			collection = undefined;
			const metadata = (await open()).metadata ?? {};
			const text = (key: string) => (typeof metadata[key] === 'string' ? (metadata[key] as string) : null);
			const number = (key: string) => (typeof metadata[key] === 'number' ? (metadata[key] as number) : null);
			return {
				contentVersion: text('contentVersion'),
				model: text('model'),
				dtype: text('dtype'),
				queryPrefix: text('queryPrefix') ?? 'query: ',
				topK: number('topK'),
				maxDistance: number('maxDistance'),
			};
		},
		async byIds(ids) {
			if (ids.length === 0) return [];
			const got = await (await open()).get({ ids: [...ids], include: ['documents', 'metadatas'] });
			// Chroma answers in its own order; the browser's ranking is the one that counts.
			const found = new Map(got.ids.map((id, i) => [id, toContext(id, got.documents[i] ?? null, got.metadatas[i] ?? null)]));
			return ids.flatMap((id) => found.get(id) ?? []);
		},
		async search(embedding, { topK, maxDistance }) {
			const found = await (await open()).query({
				queryEmbeddings: [Array.from(embedding)],
				nResults: topK,
				include: ['documents', 'metadatas', 'distances'],
			});
			const ids = found.ids[0] ?? [];
			return ids
				.map((id, i) => toContext(id, found.documents[0]?.[i] ?? null, found.metadatas[0]?.[i] ?? null, found.distances[0]?.[i] ?? 2))
				.filter((context) => context.distance! <= maxDistance);
		},
		async reachable() {
			try {
				await client.heartbeat();
				return true;
			} catch {
				return false;
			}
		},
	};
}
