import {
	KB_FORMAT,
	KB_VECTOR_ENCODING,
	KB_VERSION,
	kbVectorBytes,
	validateKbSettings,
	type KbArticleEntry,
	type KbChunkEntry,
	type KbFile,
	type KbSettings,
} from './runtime/kb.ts';

/** One embedded section, as the build knows it. Its text is deliberately not part of this type. */
export interface KbInputChunk {
	/** `<url>#<n>`, n a non-negative integer written without leading zeros. */
	id: string;
	/** Page URL, e.g. `/blog/post/`. */
	url: string;
	/** Section id on the page, or '' for the top of the page. */
	anchor: string;
	title: string;
	/** Heading path joined with ' › ', '' at the top of the page. */
	heading: string;
	/** Unit-length passage embedding. */
	vector: Float32Array;
}

/** Everything kb.json is made from. */
export interface KbInput extends KbSettings {
	chunks: KbInputChunk[];
}

// Vectors are unit length (normalize: true); anything further off is a pipeline bug, not rounding.
const UNIT_TOLERANCE = 1e-3;

/** Validates `input` and returns the kb.json text (see docs/kb-format.md). Same input, same bytes. */
export function encodeKb(input: KbInput): string {
	const settings = validateKbSettings(input as unknown as Record<string, unknown>, 'encodeKb');
	const { dimension } = settings;
	if (!Array.isArray(input.chunks)) throw new Error('encodeKb: "chunks" must be an array');
	const chunks = input.chunks;

	const articles: KbArticleEntry[] = [];
	const articleByUrl = new Map<string, number>();
	const seenIds = new Set<string>();
	// Only named fields are copied, so extra properties a caller's chunk objects carry (say, the chunk text)
	// can never reach the public file.
	const entries = chunks.map((chunk, i): KbChunkEntry => {
		const where = `encodeKb: chunks[${i}]`;
		const { id, url, anchor, title, heading, vector } = chunk;
		for (const [name, value] of Object.entries({ id, url, anchor, title, heading })) {
			if (typeof value !== 'string') throw new Error(`${where} "${name}" must be a string`);
		}
		if (url === '') throw new Error(`${where} "url" must not be empty`);
		if (anchor.startsWith('#')) throw new Error(`${where} "anchor" must be the bare section id, without "#"`);
		const n = id.startsWith(`${url}#`) ? id.slice(url.length + 1) : '';
		if (!/^(?:0|[1-9]\d*)$/.test(n) || !Number.isSafeInteger(Number(n))) {
			throw new Error(`${where} "id" must be "<url>#<n>" with its url ${JSON.stringify(url)}, got ${JSON.stringify(id)}`);
		}
		if (seenIds.has(id)) throw new Error(`${where} repeats the id ${JSON.stringify(id)}`);
		seenIds.add(id);
		checkVector(vector, dimension, `${where} (${id})`);

		let article = articleByUrl.get(url);
		if (article === undefined) {
			article = articles.length;
			articleByUrl.set(url, article);
			articles.push([url, title]);
		}
		// One title per page is what lets the articles table store it once.
		const [, pageTitle] = articles[article] as KbArticleEntry;
		if (pageTitle !== title) {
			throw new Error(`${where} has title ${JSON.stringify(title)} but an earlier chunk of ${url} has ${JSON.stringify(pageTitle)}`);
		}
		return [article, Number(n), anchor, heading];
	});

	const file: KbFile = {
		format: KB_FORMAT,
		version: KB_VERSION,
		...settings,
		articles,
		chunks: entries,
		vectors: { encoding: KB_VECTOR_ENCODING, data: encodeVectors(chunks, dimension).toString('base64') },
	};
	// Written as ASCII (\uXXXX escapes): browsers decode and JSON.parse a one-byte string about twice as fast as one
	// that a single "›" or Japanese title turns into two-byte text, and kb.json is parsed on every first open.
	return JSON.stringify(file).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function checkVector(vector: unknown, dimension: number, where: string): void {
	if (!(vector instanceof Float32Array)) throw new Error(`${where} "vector" must be a Float32Array`);
	if (vector.length !== dimension) {
		throw new Error(`${where} "vector" has ${vector.length} components but "dimension" is ${dimension}`);
	}
	let squares = 0;
	for (let k = 0; k < dimension; k++) {
		const component = vector[k] as number;
		if (!Number.isFinite(component)) throw new Error(`${where} "vector" component ${k} is not a finite number`);
		squares += component * component;
	}
	const norm = Math.sqrt(squares);
	if (Math.abs(norm - 1) > UNIT_TOLERANCE) {
		throw new Error(`${where} "vector" must be unit length (normalize: true), but its length is ${norm}`);
	}
}

// Layout: centroid (dimension float32), one float32 scale per chunk, then each chunk's int8 components,
// all little-endian. Subtracting the centroid first matters for e5: its vectors share a large common
// direction, and quantising only what differs from it roughly halves the rounding error where rankings are decided.
function encodeVectors(chunks: KbInputChunk[], dimension: number): Buffer {
	const vectors = chunks.map((chunk) => chunk.vector);
	const count = vectors.length;
	const block = Buffer.alloc(kbVectorBytes(count, dimension));

	const sum = new Float64Array(dimension);
	for (const vector of vectors) for (let k = 0; k < dimension; k++) sum[k] = (sum[k] as number) + (vector[k] as number);
	// The float32 centroid, not the float64 mean, is what readers will add back, so residuals are taken from it.
	const centroid = new Float32Array(dimension);
	for (let k = 0; k < dimension; k++) centroid[k] = count > 0 ? (sum[k] as number) / count : 0;
	for (let k = 0; k < dimension; k++) block.writeFloatLE(centroid[k] as number, 4 * k);

	const codes = new Int8Array(block.buffer, block.byteOffset + 4 * (dimension + count), count * dimension);
	const residual = new Float64Array(dimension);
	vectors.forEach((vector, j) => {
		let largest = 0;
		for (let k = 0; k < dimension; k++) {
			const value = (vector[k] as number) - (centroid[k] as number);
			residual[k] = value;
			largest = Math.max(largest, Math.abs(value));
		}
		// Rounded to float32 before use, so the encoder divides by exactly the scale readers multiply by.
		const scale = Math.fround(largest / 127);
		block.writeFloatLE(scale, 4 * (dimension + j));
		if (scale === 0) return;
		const row = j * dimension;
		for (let k = 0; k < dimension; k++) {
			codes[row + k] = Math.max(-127, Math.min(127, Math.round((residual[k] as number) / scale)));
		}
	});
	return block;
}
