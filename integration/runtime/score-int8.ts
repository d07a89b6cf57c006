// Browser-safe: kb.ts uses this in the search worker, so no node: imports.
// A WebAssembly SIMD kernel for the passes over kb.json's int8 codes that cost N·D each: the integer dot
// product of a quantised query with every chunk, and each chunk's sum of absolute codes and of squared codes.
// The module is assembled here from its instructions, so no .wasm file has to be served and no build step
// makes one.

/** The kernel bound to one knowledge base's codes, which live in the kernel's own memory. */
export interface Int8Scorer {
	/** Every chunk's codes, chunk after chunk: fill this (or {@link block}) before calling anything else. */
	readonly codes: Int8Array;
	/**
	 * The `leading` bytes asked for, then {@link codes}: room to decode a whole vector block into, so that the
	 * codes land where the kernel reads them without a copy.
	 */
	readonly block: Uint8Array;
	/** Where {@link dots} reads the query: D int16 components. */
	readonly query: Int16Array;
	/** Sets each chunk's query · codes (integer arithmetic, exact) and returns them, one per chunk. */
	dots(): Int32Array;
	/** Sets each chunk's Σ|code| and returns them, one per chunk: one streaming pass over every code byte. */
	absoluteSums(): Int32Array;
	/** Sets each chunk's Σcode² and returns them, one per chunk, in the same way. */
	squares(): Int32Array;
}

/** Components per SIMD step; the kernel handles dimensions that are a multiple of it. */
const LANES = 16;

/**
 * Largest |query component| {@link Int8Scorer.dots} takes at this dimension: every int32 it sums, up to
 * D products of a code (|code| ≤ 128) and a query component, must stay below 2³¹.
 */
export function int8ScorerQueryLimit(dimension: number): number {
	return Math.min(32767, Math.floor(0x7fffffff / (128 * dimension)));
}

/**
 * A kernel for `count` chunks of `dimension` codes, with `leading` bytes of room before the codes, or undefined
 * where it cannot run (no WebAssembly SIMD, a dimension that is not a multiple of 16, or one so large that
 * Σcode² could leave int32); the caller then uses its plain JavaScript loop.
 */
export function createInt8Scorer(count: number, dimension: number, leading = 0): Int8Scorer | undefined {
	if (dimension % LANES !== 0 || dimension === 0 || count === 0 || int8ScorerQueryLimit(dimension) < 128) return undefined;
	const module = compiledModule();
	if (!module) return undefined;

	// Layout: the leading bytes, placed so that the codes after them start 16-byte aligned, then the query
	// (aligned too), then one int32 per chunk for results.
	const codesBytes = count * dimension;
	const blockOffset = (LANES - (leading % LANES)) % LANES;
	const codesOffset = blockOffset + leading;
	const queryOffset = codesOffset + Math.ceil(codesBytes / 16) * 16;
	const resultOffset = queryOffset + 2 * dimension;
	const total = resultOffset + 4 * count;
	const pages = Math.ceil(total / 65536);
	if (pages > 65536) return undefined;
	const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
	const instance = new WebAssembly.Instance(module, { m: { memory } });
	const exports = instance.exports as { dots: Kernel; sums: Kernel; squares: Kernel };
	// The memory never grows, so these views stay valid for the scorer's life.
	const results = new Int32Array(memory.buffer, resultOffset, count);
	const run = (kernel: Kernel) => {
		kernel(queryOffset, codesOffset, count, dimension, resultOffset);
		return results;
	};
	return {
		codes: new Int8Array(memory.buffer, codesOffset, codesBytes),
		block: new Uint8Array(memory.buffer, blockOffset, leading + codesBytes),
		query: new Int16Array(memory.buffer, queryOffset, dimension),
		dots: () => run(exports.dots),
		absoluteSums: () => run(exports.sums),
		squares: () => run(exports.squares),
	};
}

type Kernel = (query: number, codes: number, count: number, dimension: number, out: number) => void;

let compiled: WebAssembly.Module | null | undefined;

/** The module, compiled once per realm; null where WebAssembly or its SIMD instructions are missing. */
function compiledModule(): WebAssembly.Module | null {
	if (compiled !== undefined) return compiled;
	compiled = null;
	if (typeof WebAssembly !== 'object') return compiled;
	const bytes = assembleModule();
	try {
		// Synchronous compilation is allowed for a module this small even on a page's main thread.
		if (WebAssembly.validate(bytes)) compiled = new WebAssembly.Module(bytes);
	} catch {
		// A Content-Security-Policy without 'wasm-unsafe-eval' refuses compilation: the JavaScript loop still works.
	}
	return compiled;
}

// ---------------------------------------------------------------------------------------------------------
// The module's bytes. All three functions take (query, codes, count, dimension, out) and walk the codes once,
// 16 bytes per step, writing one int32 per chunk at `out`.

const I32 = 0x7f;
const V128 = 0x7b;

const op = {
	block: 0x02,
	loop: 0x03,
	end: 0x0b,
	br: 0x0c,
	brIf: 0x0d,
	localGet: 0x20,
	localSet: 0x21,
	localTee: 0x22,
	i32Store: 0x36,
	i32Const: 0x41,
	i32Eqz: 0x45,
	i32LtU: 0x49,
	i32Add: 0x6a,
	i32Sub: 0x6b,
	i32Shl: 0x74,
	void: 0x40,
} as const;

/** SIMD instructions (prefix 0xfd, then the opcode as unsigned LEB128). */
const simd = {
	load: 0x00,
	i32x4Splat: 0x11,
	i32x4ExtractLane: 0x1b,
	i8x16Abs: 0x60,
	i16x8ExtaddPairwiseI8x16U: 0x7d,
	i32x4ExtaddPairwiseI16x8U: 0x7f,
	i16x8ExtendLowI8x16S: 0x87,
	i16x8ExtendHighI8x16S: 0x88,
	i32x4Add: 0xae,
	i32x4DotI16x8S: 0xba,
} as const;

function unsignedLeb(value: number): number[] {
	const bytes: number[] = [];
	do {
		let byte = value & 0x7f;
		value >>>= 7;
		if (value !== 0) byte |= 0x80;
		bytes.push(byte);
	} while (value !== 0);
	return bytes;
}

function v(opcode: number, ...immediates: number[]): number[] {
	return [0xfd, ...unsignedLeb(opcode), ...immediates];
}

function vector(items: number[][]): number[] {
	return [...unsignedLeb(items.length), ...items.flat()];
}

function section(id: number, content: number[]): number[] {
	return [id, ...unsignedLeb(content.length), ...content];
}

function utf8(text: string): number[] {
	return vector([...text].map((char) => [char.charCodeAt(0)]));
}

// Locals: 0 query, 1 codes, 2 count, 3 dimension, 4 out (parameters); 5 k, 6 accumulator, 7 the 16 codes,
// 8 half of them widened to int16.
const [QUERY, CODES, COUNT, DIMENSION, OUT, K, ACC, BYTES, WIDE] = [0, 1, 2, 3, 4, 5, 6, 7, 8];

/** Accumulates one 16-code step into ACC; BYTES holds the codes, K their offset within the chunk. */
function dotStep(): number[] {
	const queryAt = (offset: number) => [
		op.localGet, QUERY, op.localGet, K, op.i32Const, 1, op.i32Shl, op.i32Add,
		...v(simd.load, 0, offset),
	];
	return [
		op.localGet, ACC,
		op.localGet, BYTES, ...v(simd.i16x8ExtendLowI8x16S), ...queryAt(0), ...v(simd.i32x4DotI16x8S), ...v(simd.i32x4Add),
		op.localGet, BYTES, ...v(simd.i16x8ExtendHighI8x16S), ...queryAt(16), ...v(simd.i32x4DotI16x8S), ...v(simd.i32x4Add),
		op.localSet, ACC,
	];
}

/** Σcode² of the step: each half, widened to int16, dotted with itself. */
function squareStep(): number[] {
	const half = (extend: number) => [
		op.localGet, BYTES, ...v(extend), op.localTee, WIDE, op.localGet, WIDE, ...v(simd.i32x4DotI16x8S), ...v(simd.i32x4Add),
	];
	return [op.localGet, ACC, ...half(simd.i16x8ExtendLowI8x16S), ...half(simd.i16x8ExtendHighI8x16S), op.localSet, ACC];
}

/** Σ|code| of the step: |−128| reads as 128 because the widening adds are unsigned. */
function sumStep(): number[] {
	return [
		op.localGet, ACC,
		op.localGet, BYTES, ...v(simd.i8x16Abs), ...v(simd.i16x8ExtaddPairwiseI8x16U), ...v(simd.i32x4ExtaddPairwiseI16x8U),
		...v(simd.i32x4Add),
		op.localSet, ACC,
	];
}

function chunkLoop(step: number[]): number[] {
	const lane = (n: number) => [op.localGet, ACC, ...v(simd.i32x4ExtractLane, n)];
	return [
		op.block, op.void,
		op.loop, op.void,
		op.localGet, COUNT, op.i32Eqz, op.brIf, 1,
		op.i32Const, 0, ...v(simd.i32x4Splat), op.localSet, ACC,
		op.i32Const, 0, op.localSet, K,
		op.loop, op.void,
		op.localGet, CODES, op.localGet, K, op.i32Add, ...v(simd.load, 0, 0), op.localSet, BYTES,
		...step,
		op.localGet, K, op.i32Const, LANES, op.i32Add, op.localTee, K, op.localGet, DIMENSION, op.i32LtU, op.brIf, 0,
		op.end,
		op.localGet, OUT, ...lane(0), ...lane(1), op.i32Add, ...lane(2), op.i32Add, ...lane(3), op.i32Add,
		op.i32Store, 2, 0,
		op.localGet, OUT, op.i32Const, 4, op.i32Add, op.localSet, OUT,
		op.localGet, CODES, op.localGet, DIMENSION, op.i32Add, op.localSet, CODES,
		op.localGet, COUNT, op.i32Const, 1, op.i32Sub, op.localSet, COUNT,
		op.br, 0,
		op.end,
		op.end,
		op.end,
	];
}

function body(code: number[]): number[] {
	const locals = vector([
		[1, I32],
		[3, V128],
	]);
	return [...unsignedLeb(locals.length + code.length), ...locals, ...code];
}

function assembleModule(): Uint8Array<ArrayBuffer> {
	const kernelType = [0x60, ...vector([[I32], [I32], [I32], [I32], [I32]]), 0];
	const bytes = [
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		...section(1, vector([kernelType])),
		// The memory comes from JavaScript, sized for one knowledge base: limits flag 0, at least 1 page.
		...section(2, vector([[...utf8('m'), ...utf8('memory'), 0x02, 0x00, 1]])),
		...section(3, vector([[0], [0], [0]])),
		...section(7, vector([
			[...utf8('dots'), 0x00, 0],
			[...utf8('sums'), 0x00, 1],
			[...utf8('squares'), 0x00, 2],
		])),
		...section(10, vector([body(chunkLoop(dotStep())), body(chunkLoop(sumStep())), body(chunkLoop(squareStep()))])),
	];
	return new Uint8Array(bytes);
}
