import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { seededRandom } from '../helpers/seeded-random.ts';

export type TinyLlamaVariant = 'endless' | 'stops';

export interface TinyLlamaOptions {
	variant: TinyLlamaVariant;
	/** Metadata keys to leave out, to produce deliberately broken files. */
	omitMetadata?: readonly string[];
}

/**
 * Writes a tiny, deterministic llama-architecture GGUF whose greedy output is designed:
 * `endless` cycles through mixed English/Japanese text forever, `stops` answers one short
 * sentence and then emits `<|im_end|>`.
 */
export async function makeTinyLlama(file: string, options: TinyLlamaOptions): Promise<void> {
	await mkdir(dirname(file), { recursive: true });
	await writeFile(file, buildTinyLlama(options));
}

const EMBEDDING = 128;
const HEADS = 2; // head dimension 64, the most common shape in llama.cpp's CPU kernels
const LAYERS = 2;
const FEED_FORWARD = 128;
const CONTEXT_LENGTH = 2048;
const ALIGNMENT = 32;
const SEED = 0x5eed_11a4;

const TOKEN_NORMAL = 1;
const TOKEN_UNKNOWN = 2;
const TOKEN_CONTROL = 3;
const TOKEN_BYTE = 6;

// The prompt the ChatML template leaves before generation ends with "\n", so "\n" is where
// both chains start; every token appears at most once per chain, because the network only
// looks at the current token and a repeated token would short-circuit the cycle.
const CHAINS: Record<TinyLlamaVariant, readonly string[]> = {
	endless: ['\n', 'Hello', '▁world', ',', '▁the', '▁sky', '▁is', '▁blue', '、', 'そ', 'ら', 'が', 'あ', 'お', 'い', '。'],
	stops: ['\n', 'Hello', '▁world', '、', 'こ', 'ん', 'に', 'ち', 'は', '。', '<|im_end|>'],
};
const WORDS = ['Hello', '▁world', '▁the', '▁sky', '▁is', '▁blue'];

type Vocabulary = { tokens: string[]; types: number[]; scores: number[] };

function buildVocabulary(): Vocabulary {
	const tokens: string[] = [];
	const types: number[] = [];
	const scores: number[] = [];
	const add = (token: string, type: number): void => {
		if (tokens.includes(token)) throw new Error(`duplicate token ${JSON.stringify(token)}`);
		tokens.push(token);
		types.push(type);
		// SentencePiece merges the highest-scoring pair first; longer pieces should win.
		scores.push(type === TOKEN_NORMAL ? [...token].length - tokens.length / 1000 : 0);
	};
	add('<unk>', TOKEN_UNKNOWN);
	add('<s>', TOKEN_CONTROL);
	add('</s>', TOKEN_CONTROL);
	add('<|im_start|>', TOKEN_CONTROL);
	add('<|im_end|>', TOKEN_CONTROL);
	for (let byte = 0; byte < 256; byte++) {
		add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, TOKEN_BYTE);
	}
	add('▁', TOKEN_NORMAL);
	add('\n', TOKEN_NORMAL);
	for (let code = 0x21; code <= 0x7e; code++) add(String.fromCharCode(code), TOKEN_NORMAL);
	for (let code = 0x21; code <= 0x7e; code++) add(`▁${String.fromCharCode(code)}`, TOKEN_NORMAL);
	for (let code = 0x3041; code <= 0x3093; code++) add(String.fromCharCode(code), TOKEN_NORMAL);
	add('、', TOKEN_NORMAL);
	add('。', TOKEN_NORMAL);
	for (const word of WORDS) add(word, TOKEN_NORMAL);
	return { tokens, types, scores };
}

const CHAT_TEMPLATE =
	"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function createGaussian(random: () => number): () => number {
	return () => {
		const u = 1 - random();
		const v = random();
		return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
	};
}

function normalize(vector: Float64Array): void {
	let norm = 0;
	for (const value of vector) norm += value * value;
	norm = Math.sqrt(norm);
	for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
}

type Tensor = { name: string; dims: number[]; data: Float32Array };

function buildTensors(vocabulary: Vocabulary, variant: TinyLlamaVariant): Tensor[] {
	const random = seededRandom(SEED);
	const gaussian = createGaussian(random);
	const vocabSize = vocabulary.tokens.length;
	const id = (token: string): number => {
		const index = vocabulary.tokens.indexOf(token);
		if (index < 0) throw new Error(`token ${JSON.stringify(token)} missing from the vocabulary`);
		return index;
	};

	// Dimension 0 is the same for every token, so after RMS norm it acts as a bias input:
	// output rows use it to push forbidden tokens far down and to favour the chain's start.
	const biasInput = 0.5;
	const keyScale = Math.sqrt(1 - biasInput * biasInput);
	const keyDims = EMBEDDING - 1;
	const keys: Float64Array[] = [];
	for (let token = 0; token < vocabSize; token++) {
		const key = new Float64Array(keyDims);
		for (let i = 0; i < keyDims; i++) key[i] = gaussian();
		keys.push(key);
	}
	// Chain tokens get exactly orthonormal keys so their successors win by a wide, known margin.
	const chainIds = [...new Set([...CHAINS.endless, ...CHAINS.stops].map(id))];
	const orthonormal: Float64Array[] = [];
	for (const token of chainIds) {
		const key = keys[token]!;
		for (const basis of orthonormal) {
			let dot = 0;
			for (let i = 0; i < keyDims; i++) dot += key[i]! * basis[i]!;
			for (let i = 0; i < keyDims; i++) key[i] = key[i]! - dot * basis[i]!;
		}
		normalize(key);
		orthonormal.push(key);
	}
	for (const key of keys) normalize(key);

	const embeddings = new Float32Array(vocabSize * EMBEDDING);
	for (let token = 0; token < vocabSize; token++) {
		embeddings[token * EMBEDDING] = biasInput;
		for (let i = 0; i < keyDims; i++) embeddings[token * EMBEDDING + 1 + i] = keyScale * keys[token]![i]!;
	}

	const chain = CHAINS[variant].map(id);
	const successors = new Map<number, number>();
	for (let i = 0; i < chain.length; i++) {
		const next = chain[i + 1] ?? (variant === 'endless' ? chain[0] : undefined);
		if (next !== undefined) successors.set(chain[i]!, next);
	}
	const start = chain[1]!;
	const ending = variant === 'stops' ? new Set([id('<|im_end|>')]) : new Set<number>();

	const successorGain = 3; // logit ≈ 11.3 · 0.87 · 3 ≈ 29 for the designed successor
	const forbiddenBias = -10; // ≈ −57: byte, control and (unless designed) end tokens
	const startBias = 2; // ≈ +11: where tokens outside the chain lead
	const output = new Float32Array(vocabSize * EMBEDDING);
	for (let token = 0; token < vocabSize; token++) {
		const allowed = vocabulary.types[token] === TOKEN_NORMAL || ending.has(token);
		output[token * EMBEDDING] = !allowed ? forbiddenBias : token === start ? startBias : 0;
	}
	for (const [current, next] of successors) {
		for (let i = 0; i < keyDims; i++) {
			output[next * EMBEDDING + 1 + i] = output[next * EMBEDDING + 1 + i]! + successorGain * keys[current]![i]!;
		}
	}

	const ones = (size: number): Float32Array => new Float32Array(size).fill(1);
	const randomMatrix = (inputs: number, outputs: number, scale: number): Float32Array => {
		const data = new Float32Array(inputs * outputs);
		for (let i = 0; i < data.length; i++) data[i] = gaussian() * scale;
		return data;
	};

	const tensors: Tensor[] = [
		{ name: 'token_embd.weight', dims: [EMBEDDING, vocabSize], data: embeddings },
		{ name: 'output_norm.weight', dims: [EMBEDDING], data: ones(EMBEDDING) },
		{ name: 'output.weight', dims: [EMBEDDING, vocabSize], data: output },
	];
	// Real attention and feed-forward compute with ordinary weights, but the projections back
	// into the residual stream are small so the context only nudges the next-token choice.
	for (let layer = 0; layer < LAYERS; layer++) {
		const prefix = `blk.${layer}`;
		tensors.push(
			{ name: `${prefix}.attn_norm.weight`, dims: [EMBEDDING], data: ones(EMBEDDING) },
			{ name: `${prefix}.attn_q.weight`, dims: [EMBEDDING, EMBEDDING], data: randomMatrix(EMBEDDING, EMBEDDING, 0.05) },
			{ name: `${prefix}.attn_k.weight`, dims: [EMBEDDING, EMBEDDING], data: randomMatrix(EMBEDDING, EMBEDDING, 0.05) },
			{ name: `${prefix}.attn_v.weight`, dims: [EMBEDDING, EMBEDDING], data: randomMatrix(EMBEDDING, EMBEDDING, 0.05) },
			{ name: `${prefix}.attn_output.weight`, dims: [EMBEDDING, EMBEDDING], data: randomMatrix(EMBEDDING, EMBEDDING, 0.001) },
			{ name: `${prefix}.ffn_norm.weight`, dims: [EMBEDDING], data: ones(EMBEDDING) },
			{ name: `${prefix}.ffn_gate.weight`, dims: [EMBEDDING, FEED_FORWARD], data: randomMatrix(EMBEDDING, FEED_FORWARD, 0.05) },
			{ name: `${prefix}.ffn_up.weight`, dims: [EMBEDDING, FEED_FORWARD], data: randomMatrix(EMBEDDING, FEED_FORWARD, 0.05) },
			{ name: `${prefix}.ffn_down.weight`, dims: [FEED_FORWARD, EMBEDDING], data: randomMatrix(FEED_FORWARD, EMBEDDING, 0.001) },
		);
	}
	return tensors;
}

const GGUF_UINT32 = 4;
const GGUF_INT32 = 5;
const GGUF_FLOAT32 = 6;
const GGUF_BOOL = 7;
const GGUF_STRING = 8;
const GGUF_ARRAY = 9;
const GGML_TYPE_F32 = 0;

type MetadataValue =
	| { type: 'u32'; value: number }
	| { type: 'f32'; value: number }
	| { type: 'bool'; value: boolean }
	| { type: 'string'; value: string }
	| { type: 'strings'; value: readonly string[] }
	| { type: 'f32s'; value: readonly number[] }
	| { type: 'i32s'; value: readonly number[] };

/** Little-endian append-only byte buffer. */
class ByteWriter {
	private chunks: Buffer[] = [];
	length = 0;

	bytes(buffer: Buffer): void {
		this.chunks.push(buffer);
		this.length += buffer.length;
	}
	u32(value: number): void {
		const buffer = Buffer.alloc(4);
		buffer.writeUInt32LE(value);
		this.bytes(buffer);
	}
	i32(value: number): void {
		const buffer = Buffer.alloc(4);
		buffer.writeInt32LE(value);
		this.bytes(buffer);
	}
	u64(value: number): void {
		const buffer = Buffer.alloc(8);
		buffer.writeBigUInt64LE(BigInt(value));
		this.bytes(buffer);
	}
	f32(value: number): void {
		const buffer = Buffer.alloc(4);
		buffer.writeFloatLE(value);
		this.bytes(buffer);
	}
	string(value: string): void {
		const encoded = Buffer.from(value, 'utf8');
		this.u64(encoded.length);
		this.bytes(encoded);
	}
	pad(alignment: number): void {
		const remainder = this.length % alignment;
		if (remainder !== 0) this.bytes(Buffer.alloc(alignment - remainder));
	}
	toBuffer(): Buffer {
		return Buffer.concat(this.chunks, this.length);
	}
}

function writeMetadataValue(writer: ByteWriter, entry: MetadataValue): void {
	switch (entry.type) {
		case 'u32':
			writer.u32(GGUF_UINT32);
			writer.u32(entry.value);
			return;
		case 'f32':
			writer.u32(GGUF_FLOAT32);
			writer.f32(entry.value);
			return;
		case 'bool':
			writer.u32(GGUF_BOOL);
			writer.bytes(Buffer.from([entry.value ? 1 : 0]));
			return;
		case 'string':
			writer.u32(GGUF_STRING);
			writer.string(entry.value);
			return;
		case 'strings':
			writer.u32(GGUF_ARRAY);
			writer.u32(GGUF_STRING);
			writer.u64(entry.value.length);
			for (const value of entry.value) writer.string(value);
			return;
		case 'f32s':
			writer.u32(GGUF_ARRAY);
			writer.u32(GGUF_FLOAT32);
			writer.u64(entry.value.length);
			for (const value of entry.value) writer.f32(value);
			return;
		case 'i32s':
			writer.u32(GGUF_ARRAY);
			writer.u32(GGUF_INT32);
			writer.u64(entry.value.length);
			for (const value of entry.value) writer.i32(value);
			return;
	}
}

function buildTinyLlama(options: TinyLlamaOptions): Buffer {
	const vocabulary = buildVocabulary();
	const tensors = buildTensors(vocabulary, options.variant);
	const metadata: [string, MetadataValue][] = [
		['general.architecture', { type: 'string', value: 'llama' }],
		['general.name', { type: 'string', value: `tiny-llama-${options.variant}` }],
		['general.file_type', { type: 'u32', value: 0 }],
		['general.alignment', { type: 'u32', value: ALIGNMENT }],
		['llama.context_length', { type: 'u32', value: CONTEXT_LENGTH }],
		['llama.embedding_length', { type: 'u32', value: EMBEDDING }],
		['llama.block_count', { type: 'u32', value: LAYERS }],
		['llama.feed_forward_length', { type: 'u32', value: FEED_FORWARD }],
		['llama.attention.head_count', { type: 'u32', value: HEADS }],
		['llama.attention.head_count_kv', { type: 'u32', value: HEADS }],
		['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
		['llama.rope.dimension_count', { type: 'u32', value: EMBEDDING / HEADS }],
		['llama.vocab_size', { type: 'u32', value: vocabulary.tokens.length }],
		['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
		['tokenizer.ggml.tokens', { type: 'strings', value: vocabulary.tokens }],
		['tokenizer.ggml.scores', { type: 'f32s', value: vocabulary.scores }],
		['tokenizer.ggml.token_type', { type: 'i32s', value: vocabulary.types }],
		['tokenizer.ggml.unknown_token_id', { type: 'u32', value: vocabulary.tokens.indexOf('<unk>') }],
		['tokenizer.ggml.bos_token_id', { type: 'u32', value: vocabulary.tokens.indexOf('<s>') }],
		['tokenizer.ggml.eos_token_id', { type: 'u32', value: vocabulary.tokens.indexOf('</s>') }],
		['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
		['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
		['tokenizer.chat_template', { type: 'string', value: CHAT_TEMPLATE }],
	];
	const omitted = new Set(options.omitMetadata ?? []);
	const kept = metadata.filter(([key]) => !omitted.has(key));

	const writer = new ByteWriter();
	writer.bytes(Buffer.from('GGUF', 'latin1'));
	writer.u32(3);
	writer.u64(tensors.length);
	writer.u64(kept.length);
	for (const [key, value] of kept) {
		writer.string(key);
		writeMetadataValue(writer, value);
	}
	let offset = 0;
	for (const tensor of tensors) {
		writer.string(tensor.name);
		writer.u32(tensor.dims.length);
		for (const dim of tensor.dims) writer.u64(dim);
		writer.u32(GGML_TYPE_F32);
		writer.u64(offset);
		offset += Math.ceil(tensor.data.byteLength / ALIGNMENT) * ALIGNMENT;
	}
	writer.pad(ALIGNMENT);
	for (const tensor of tensors) {
		writer.bytes(Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
		writer.pad(ALIGNMENT);
	}
	return writer.toBuffer();
}
