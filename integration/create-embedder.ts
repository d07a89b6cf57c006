import { stat } from 'node:fs/promises';
import path from 'node:path';
import { env, pipeline } from '@huggingface/transformers';
import type { FeatureExtractionPipeline, ProgressInfo } from '@huggingface/transformers';
import { E5_PASSAGE_PREFIX, E5_QUERY_PREFIX } from './runtime/e5.ts';

/** Weight formats Transformers.js can load for an e5 model. */
export type EmbedderDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';

/**
 * `model` is a Hugging Face id (e.g. `Xenova/multilingual-e5-small`) or a model folder, absolute or relative
 * to cwd; `cacheDir` is where Hub downloads are kept (unused for folders).
 */
export interface EmbedderOptions {
	model: string;
	dtype: EmbedderDtype;
	cacheDir?: string;
	/** Download progress of a Hub model's files (nothing is reported for a local folder or a cached model). */
	onDownload?: (progress: DownloadProgress) => void;
}

/** Bytes of one file of a Hub model received so far. */
export interface DownloadProgress {
	file: string;
	loaded: number;
	total: number;
}

/** A loaded e5 model that turns texts into unit-length vectors. */
export interface Embedder {
	readonly dimension: number;
	readonly model: string;
	readonly dtype: EmbedderDtype;
	/** Tokens the model reads for this exact string, its special tokens included. */
	countTokens(text: string): number;
	embedPassages(texts: string[]): Promise<Float32Array[]>;
	embedQueries(texts: string[]): Promise<Float32Array[]>;
	dispose(): Promise<void>;
}

// Same table as Transformers.js' DEFAULT_DTYPE_SUFFIX_MAPPING, which the package does not export.
const ONNX_SUFFIX: Record<EmbedderDtype, string> = {
	fp32: '',
	fp16: '_fp16',
	q8: '_quantized',
	int8: '_int8',
	uint8: '_uint8',
	q4: '_q4',
	bnb4: '_bnb4',
	q4f16: '_q4f16',
};

// Transformers.js' own test for a Hub id; anything else can only be a path.
const HUB_ID = /^(?:[\w.-]+\/)?[\w.-]{1,96}$/;

// Bounds padding waste and peak memory when a build embeds thousands of chunks.
const BATCH_SIZE = 16;

/** Loads an e5 model from the Hub (cached in `cacheDir`) or from a local folder. */
export async function createEmbedder(options: EmbedderOptions): Promise<Embedder> {
	const { model, dtype, cacheDir, onDownload } = options;
	if (!Object.hasOwn(ONNX_SUFFIX, dtype)) {
		throw new Error(`Unsupported dtype "${dtype}"; expected one of ${Object.keys(ONNX_SUFFIX).join(', ')}`);
	}
	const localFolder = await resolveLocalFolder(model, dtype);
	const extractor = await withEnvLock(() =>
		localFolder === null ? loadFromHub(model, dtype, cacheDir, onDownload) : loadFromFolder(localFolder, dtype),
	);

	const embed = async (prefix: string, texts: string[]): Promise<Float32Array[]> => {
		const vectors: Float32Array[] = [];
		for (let start = 0; start < texts.length; start += BATCH_SIZE) {
			const batch = texts.slice(start, start + BATCH_SIZE).map((text) => prefix + text);
			const output = await extractor(batch, { pooling: 'mean', normalize: true });
			const [rows, width] = output.dims as [number, number];
			const data = output.data as Float32Array;
			// Copies, so callers keep plain arrays that outlive the tensor.
			for (let row = 0; row < rows; row++) vectors.push(data.slice(row * width, (row + 1) * width));
			output.dispose();
		}
		return vectors;
	};

	// The config's hidden_size is only a claim; one probe gives the size the graph really outputs.
	const [probe] = await embed(E5_QUERY_PREFIX, ['dimension']);
	if (!probe || probe.length === 0) {
		await extractor.dispose();
		throw new Error(`Model ${model} (${dtype}) produced no embedding for a probe text`);
	}

	return {
		dimension: probe.length,
		model,
		dtype,
		countTokens: (text) => extractor.tokenizer.encode(text).length,
		embedPassages: (texts) => embed(E5_PASSAGE_PREFIX, texts),
		embedQueries: (texts) => embed(E5_QUERY_PREFIX, texts),
		dispose: () => extractor.dispose(),
	};
}

/**
 * Returns the absolute folder to load from, or null for a Hub id. A string that cannot be a Hub id
 * (absolute, ./ or ../, more than one slash) must be a folder, so its absence is an error here rather
 * than a confusing download attempt.
 */
async function resolveLocalFolder(model: string, dtype: EmbedderDtype): Promise<string | null> {
	const folder = path.resolve(model);
	const required = requiredFiles(dtype);
	const explicitPath =
		path.isAbsolute(model) || /^\.\.?([\\/]|$)/.test(model) || !HUB_ID.test(model) || model.includes('..');

	const info = await stat(folder).catch(() => null);
	if (info === null) {
		if (!explicitPath) return null;
		throw new Error(`Model folder not found: ${folder} (expected a folder containing ${required.join(', ')})`);
	}
	if (!info.isDirectory()) {
		throw new Error(`Model path is not a folder: ${folder} (expected a folder containing ${required.join(', ')})`);
	}

	const missing: string[] = [];
	for (const file of required) {
		const fileInfo = await stat(path.join(folder, file)).catch(() => null);
		if (!fileInfo?.isFile()) missing.push(file);
	}
	if (missing.length > 0) {
		throw new Error(
			`Model folder ${folder} is missing ${missing.join(', ')} (dtype "${dtype}" needs ${required.join(', ')})`,
		);
	}
	return folder;
}

/** The files Transformers.js reads for a feature-extraction model in this dtype, relative to the model folder. */
export function requiredFiles(dtype: EmbedderDtype): string[] {
	return ['config.json', 'tokenizer.json', 'tokenizer_config.json', `onnx/model${ONNX_SUFFIX[dtype]}.onnx`];
}

// An absolute path never matches Transformers.js' Hub id pattern, so it reads the files straight from the
// folder (ignoring env.localModelPath) and never builds a Hub URL; local_files_only makes that explicit.
function loadFromFolder(folder: string, dtype: EmbedderDtype): Promise<FeatureExtractionPipeline> {
	return pipeline('feature-extraction', folder, { dtype, local_files_only: true });
}

// Parts of Transformers.js' loader (file discovery, config memo) ignore the cache_dir option and read
// env.cacheDir, so a custom cache only works offline later if env.cacheDir points at it during the load.
async function loadFromHub(
	model: string,
	dtype: EmbedderDtype,
	cacheDir: string | undefined,
	onDownload: EmbedderOptions['onDownload'],
): Promise<FeatureExtractionPipeline> {
	const previous = env.cacheDir;
	if (cacheDir !== undefined) env.cacheDir = path.resolve(cacheDir);
	// Transformers.js reports a failed download as a bare "fetch failed"; the file it was fetching is what helps.
	let file = 'config.json';
	try {
		return await pipeline('feature-extraction', model, {
			dtype,
			...(cacheDir === undefined ? {} : { cache_dir: env.cacheDir ?? undefined }),
			progress_callback: (info: ProgressInfo) => {
				if (!('file' in info)) return;
				file = info.file;
				if (info.status === 'progress') onDownload?.({ file: info.file, loaded: info.loaded, total: info.total });
			},
		});
	} catch (error) {
		const url = `${env.remoteHost.replace(/\/?$/, '/')}${env.remotePathTemplate.replaceAll('{model}', model).replaceAll('{revision}', 'main')}${file}`;
		throw new Error(`could not load the embedding model ${model}: fetching ${url} failed (${(error as Error).message})`, { cause: error });
	} finally {
		env.cacheDir = previous;
	}
}

// Loads run one at a time so a temporary env.cacheDir never leaks into a concurrent load.
let envLock: Promise<unknown> = Promise.resolve();
function withEnvLock<T>(task: () => Promise<T>): Promise<T> {
	const run = envLock.then(task, task);
	envLock = run.catch(() => undefined);
	return run;
}
