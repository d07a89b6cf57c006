import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** First line of the private bundle: everything needed to load its chunks and to embed queries like them. */
export interface BundleHeader {
	format: 'astro-concierge/bundle';
	version: typeof BUNDLE_VERSION;
	model: string;
	dtype: string;
	dimension: number;
	pooling: 'mean';
	normalize: true;
	passagePrefix: string;
	queryPrefix: string;
	topK: number;
	maxDistance: number;
	/** Changes whenever any chunk's id, text, metadata or vector changes; kb.json carries the same value. */
	contentVersion: string;
	chunks: number;
}

/** What Chroma stores beside each chunk's text and embedding. */
export interface BundleChunkMetadata {
	url: string;
	anchor: string;
	title: string;
	heading: string;
	lang: string;
	/** Hash of the article's source and URL: tells which chunks came from one version of an article. */
	articleHash: string;
}

/** One chunk of the bundle. In the file its embedding is base64 of little-endian float32 values. */
export interface BundleChunk {
	id: string;
	text: string;
	metadata: BundleChunkMetadata;
	embedding: number[];
}

export const BUNDLE_FORMAT = 'astro-concierge/bundle';
/** 2: embeddings as base64 float32 (version 1 wrote them as JSON numbers, four times the bytes and the formatting time). */
export const BUNDLE_VERSION = 2;

/** Serialises a bundle as JSON Lines: the header, then one chunk a line. */
export function formatBundle(header: BundleHeader, chunks: readonly BundleChunk[]): string {
	const lines = [JSON.stringify(header)];
	for (const chunk of chunks) lines.push(JSON.stringify({ ...chunk, embedding: encodeEmbedding(chunk.embedding) }));
	return `${lines.join('\n')}\n`;
}

// The model's vectors are float32, so float32 keeps every value exactly.
function encodeEmbedding(values: readonly number[]): string {
	const bytes = Buffer.alloc(4 * values.length);
	values.forEach((value, i) => bytes.writeFloatLE(value, 4 * i));
	return bytes.toString('base64');
}

/** Reads a bundle file line by line, checking its header and each chunk; errors name the file and line. */
export async function readBundle(path: string): Promise<{ header: BundleHeader; chunks: BundleChunk[] }> {
	const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
	let header: BundleHeader | undefined;
	const chunks: BundleChunk[] = [];
	let number = 0;
	for await (const line of lines) {
		number++;
		if (line.trim() === '') continue;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch {
			throw new Error(`${path}:${number}: not a JSON line`);
		}
		if (!header) {
			header = checkHeader(value, `${path}:${number}`);
			continue;
		}
		chunks.push(checkChunk(value, header.dimension, `${path}:${number}`));
	}
	if (!header) throw new Error(`${path}: empty bundle (expected a header line)`);
	if (chunks.length !== header.chunks) {
		throw new Error(`${path}: the header announces ${header.chunks} chunks but the file holds ${chunks.length} (truncated?)`);
	}
	return { header, chunks };
}

function checkHeader(value: unknown, where: string): BundleHeader {
	const header = value as Partial<BundleHeader>;
	if (header?.format !== BUNDLE_FORMAT) throw new Error(`${where}: not an astro-concierge bundle (format ${JSON.stringify(header?.format)})`);
	if (header.version !== BUNDLE_VERSION) {
		throw new Error(`${where}: bundle version ${header.version} is not supported (expected ${BUNDLE_VERSION}); rebuild the site`);
	}
	for (const key of ['model', 'dtype', 'passagePrefix', 'queryPrefix', 'contentVersion'] as const) {
		if (typeof header[key] !== 'string') throw new Error(`${where}: header field "${key}" must be a string`);
	}
	for (const key of ['dimension', 'topK', 'maxDistance', 'chunks'] as const) {
		if (typeof header[key] !== 'number' || !(header[key] >= 0)) throw new Error(`${where}: header field "${key}" must be a number`);
	}
	return header as BundleHeader;
}

function checkChunk(value: unknown, dimension: number, where: string): BundleChunk {
	const chunk = value as Partial<BundleChunk>;
	if (typeof chunk?.id !== 'string' || chunk.id === '') throw new Error(`${where}: chunk without an id`);
	if (typeof chunk.text !== 'string') throw new Error(`${where}: chunk ${chunk.id} has no text`);
	if (!chunk.metadata || typeof chunk.metadata.url !== 'string') throw new Error(`${where}: chunk ${chunk.id} has no metadata.url`);
	const encoded = (chunk as { embedding?: unknown }).embedding;
	if (typeof encoded !== 'string') throw new Error(`${where}: chunk ${chunk.id} has no base64 embedding`);
	const bytes = Buffer.from(encoded, 'base64');
	if (bytes.length !== 4 * dimension) {
		throw new Error(`${where}: chunk ${chunk.id} has an embedding of ${bytes.length} bytes, expected ${4 * dimension} (${dimension} float32 values)`);
	}
	const embedding = Array.from({ length: dimension }, (_, i) => bytes.readFloatLE(4 * i));
	return { ...(chunk as BundleChunk), embedding };
}
