import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { KB_PATH } from './build-knowledge-base.ts';
import { requiredFiles } from './create-embedder.ts';
import { modelSource } from './model-source.ts';
import type { ConciergeOptions } from './options.ts';

/** The concierge's public folder, under the site's `base` and in the build output. */
export const ASSETS_FOLDER = `${posix.dirname(KB_PATH)}/`;
/** Transformers.js and onnxruntime-web, as {@link runtimeFiles} lists them. */
export const RUNTIME_FOLDER = `${ASSETS_FOLDER}runtime/`;
/** One folder per model, named as kb.json's `model`, holding {@link modelFiles}. */
export const MODELS_FOLDER = `${ASSETS_FOLDER}models/`;

/**
 * Public file name → absolute source path of the files the island's search runtime loads: Transformers.js' browser
 * build, and the onnxruntime-web glue and binary search-worker.ts names in `env.backends.onnx.wasm.wasmPaths`
 * (the rest of onnxruntime-web's 140 MB is never asked for).
 */
export function runtimeFiles(): Map<string, string> {
	// Resolved from this package so the onnxruntime-web is the one this Transformers.js was built against.
	const transformers = createRequire(import.meta.url).resolve('@huggingface/transformers');
	const ort = dirname(createRequire(transformers).resolve('onnxruntime-web'));
	return new Map([
		['transformers.min.js', join(dirname(transformers), 'transformers.min.js')],
		// The plain build, not the asyncify one Transformers.js picks for WebGPU: the island runs on WASM only, and
		// 14 MB fits static hosts' 25 MiB per-file limits where the 26.9 MB asyncify binary does not.
		['ort-wasm-simd-threaded.mjs', join(ort, 'ort-wasm-simd-threaded.mjs')],
		['ort-wasm-simd-threaded.wasm', join(ort, 'ort-wasm-simd-threaded.wasm')],
	]);
}

/** The embedding model's files the browser fetches, and where the build finds them. */
export interface ModelFiles {
	/** The model's folder name under MODELS_FOLDER: kb.json's `model`. */
	name: string;
	/** Absolute source folder: the local model, or its Hub download in the build's cache. */
	folder: string;
	/** Paths relative to `folder`, `/`-separated. */
	files: string[];
}

/** The files Transformers.js requests for the configured model and dtype, including ONNX external data when the model has it. */
export function modelFiles(options: Pick<ConciergeOptions, 'model' | 'dtype' | 'cacheDir'>, root: string): ModelFiles {
	const { name, folder } = modelSource(options, root);
	const files = requiredFiles(options.dtype);
	const weights = files.find((file) => file.endsWith('.onnx'))!;
	// Models over 2 GB keep their weights beside the graph; Transformers.js then fetches `<graph>_data` too.
	if (existsSync(join(folder, `${weights}_data`))) files.push(`${weights}_data`);
	return { name, folder, files };
}
