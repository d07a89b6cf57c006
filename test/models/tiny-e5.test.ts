import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { env } from '@huggingface/transformers';
import { createEmbedder } from '../../integration/create-embedder.ts';
import { makeTinyE5 } from './tiny-e5.ts';
import { PASSAGES } from './passages.ts';

const MODEL_FILES = [
	'config.json',
	'tokenizer.json',
	'tokenizer_config.json',
	'onnx/model.onnx',
	'onnx/model_quantized.onnx',
];
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const DTYPES = ['fp32', 'q8'] as const;
type Dtype = (typeof DTYPES)[number];

interface Embedded {
	dimension: number;
	passages: Float32Array[];
	queries: Float32Array[];
}

let root = '';
before(async () => {
	root = await mkdtemp(path.join(os.tmpdir(), 'tiny-e5-'));
});
after(async () => {
	await rm(root, { recursive: true, force: true });
});

function dot(a: Float32Array, b: Float32Array): number {
	let sum = 0;
	for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
	return sum;
}

/** Passage indexes ordered from most to least similar to the query. */
function ranking(query: Float32Array, passages: Float32Array[]): number[] {
	const scores = passages.map((passage) => dot(query, passage));
	return scores.map((_, i) => i).sort((a, b) => (scores[b] ?? 0) - (scores[a] ?? 0));
}

async function sha256Of(dir: string): Promise<Record<string, string>> {
	const hashes: Record<string, string> = {};
	for (const file of MODEL_FILES) {
		hashes[file] = createHash('sha256').update(await readFile(path.join(dir, file))).digest('hex');
	}
	return hashes;
}

for (const width of [64, 384] as const) {
	describe(`the tiny e5 model with width ${width}`, () => {
		let dir = '';
		const results = {} as Record<Dtype, Embedded>;
		const fetched: string[] = [];

		before(async () => {
			dir = path.join(root, `width-${width}`);
			await makeTinyE5(dir, { width });

			// Any request at all would mean the local folder was not loaded as a local folder.
			const originalFetch = env.fetch;
			env.fetch = async (input: string | URL) => {
				fetched.push(String(input));
				throw new Error(`unexpected network request to ${String(input)}`);
			};
			try {
				for (const dtype of DTYPES) {
					const embedder = await createEmbedder({ model: dir, dtype });
					try {
						results[dtype] = {
							dimension: embedder.dimension,
							passages: await embedder.embedPassages(PASSAGES.map((p) => p.passage)),
							queries: await embedder.embedQueries(PASSAGES.map((p) => p.query)),
						};
					} finally {
						await embedder.dispose();
					}
				}
			} finally {
				env.fetch = originalFetch;
			}
		});

		it('writes every file under 2 MB', async (t) => {
			for (const file of MODEL_FILES) {
				const { size } = await stat(path.join(dir, file));
				t.diagnostic(`${file}: ${size} bytes`);
				assert.ok(size < MAX_FILE_BYTES, `${file} is ${size} bytes`);
			}
		});

		it('loads from the folder without any network request', () => {
			assert.deepEqual(fetched, []);
		});

		it('reports its width as the embedding dimension', () => {
			for (const dtype of DTYPES) {
				assert.equal(results[dtype].dimension, width, dtype);
				for (const vector of [...results[dtype].passages, ...results[dtype].queries]) {
					assert.equal(vector.length, width, dtype);
				}
			}
		});

		it('returns unit-length vectors', () => {
			for (const dtype of DTYPES) {
				for (const vector of [...results[dtype].passages, ...results[dtype].queries]) {
					assert.ok(Math.abs(Math.sqrt(dot(vector, vector)) - 1) < 1e-4, `${dtype} vector norm`);
				}
			}
		});

		it('covers at least ten English and ten Japanese passages', () => {
			assert.ok(PASSAGES.filter((p) => p.lang === 'en').length >= 10);
			assert.ok(PASSAGES.filter((p) => p.lang === 'ja').length >= 10);
		});

		it('ranks each passage first by its own query in fp32 and q8', () => {
			for (const dtype of DTYPES) {
				const { passages, queries } = results[dtype];
				const misses = queries.flatMap((query, i) => {
					const best = ranking(query, passages)[0] ?? -1;
					return best === i ? [] : [`${PASSAGES[i]?.id} -> ${PASSAGES[best]?.id}`];
				});
				assert.deepEqual(misses, [], `${dtype} misranked queries`);
			}
		});

		it('gives q8 vectors that differ from fp32 but rank passages the same way', () => {
			let largestDifference = 0;
			const fp32 = [...results.fp32.passages, ...results.fp32.queries];
			const q8 = [...results.q8.passages, ...results.q8.queries];
			fp32.forEach((vector, v) => {
				vector.forEach((value, i) => {
					largestDifference = Math.max(largestDifference, Math.abs(value - (q8[v]?.[i] ?? 0)));
				});
			});
			assert.ok(largestDifference > 1e-4, `largest fp32/q8 difference is only ${largestDifference}`);

			// Unrelated passages score within quantization noise of each other, so only the winner must match;
			// every score may move a little (about 0.008 at most with these weights).
			results.fp32.queries.forEach((query, i) => {
				const q8Query = results.q8.queries[i] ?? new Float32Array(width);
				assert.equal(ranking(q8Query, results.q8.passages)[0], ranking(query, results.fp32.passages)[0]);
				results.fp32.passages.forEach((passage, j) => {
					const drift = Math.abs(dot(query, passage) - dot(q8Query, results.q8.passages[j] ?? new Float32Array(width)));
					assert.ok(drift < 0.05, `q8 moved the score of ${PASSAGES[i]?.id} / ${PASSAGES[j]?.id} by ${drift}`);
				});
			});
		});
	});
}

describe('makeTinyE5', () => {
	it('writes byte-identical files when run twice', async () => {
		for (const width of [64, 384] as const) {
			const first = path.join(root, `repeat-${width}-a`);
			const second = path.join(root, `repeat-${width}-b`);
			await makeTinyE5(first, { width });
			await makeTinyE5(second, { width });
			assert.deepEqual(await sha256Of(second), await sha256Of(first), `width ${width}`);
		}
	});
});

describe('createEmbedder', () => {
	it('rejects a missing model folder with an error that names the path', async () => {
		const missing = path.join(root, 'no-such-model');
		await assert.rejects(createEmbedder({ model: missing, dtype: 'q8' }), (error: unknown) => {
			assert.ok(error instanceof Error);
			assert.ok(error.message.includes(missing), error.message);
			return true;
		});
	});

	it('rejects a folder without the weights for the dtype, naming the missing file', async () => {
		const partial = path.join(root, 'partial-model');
		await mkdir(partial, { recursive: true });
		await writeFile(path.join(partial, 'config.json'), '{}');
		await assert.rejects(createEmbedder({ model: partial, dtype: 'q8' }), (error: unknown) => {
			assert.ok(error instanceof Error);
			assert.ok(error.message.includes(partial), error.message);
			assert.ok(error.message.includes('onnx/model_quantized.onnx'), error.message);
			return true;
		});
	});

	it('downloads a Hub model once into cacheDir and then loads it without the network', async () => {
		const source = path.join(root, 'hub-source');
		const cacheDir = path.join(root, 'hub-cache');
		await makeTinyE5(source, { width: 64 });
		const hubPrefix = 'https://huggingface.co/astro-concierge/tiny-e5/resolve/main/';
		const requested: string[] = [];
		const originalFetch = env.fetch;
		const originalCacheDir = env.cacheDir;
		try {
			// A stand-in for the Hub that serves the generated folder.
			env.fetch = async (input: string | URL) => {
				const url = String(input);
				requested.push(url);
				const file = url.startsWith(hubPrefix) ? path.join(source, url.slice(hubPrefix.length)) : null;
				const body = file === null ? null : await readFile(file).catch(() => null);
				return body === null
					? new Response('not found', { status: 404 })
					: new Response(body, { status: 200, headers: { 'content-length': String(body.length) } });
			};
			const online = await createEmbedder({ model: 'astro-concierge/tiny-e5', dtype: 'q8', cacheDir });
			await online.dispose();
			assert.ok(requested.some((url) => url.endsWith('onnx/model_quantized.onnx')), requested.join('\n'));
			assert.equal(env.cacheDir, originalCacheDir, 'env.cacheDir is restored after loading');
			await stat(path.join(cacheDir, 'astro-concierge/tiny-e5/onnx/model_quantized.onnx'));

			requested.length = 0;
			env.fetch = async (input: string | URL) => {
				requested.push(String(input));
				throw new Error('offline');
			};
			const offline = await createEmbedder({ model: 'astro-concierge/tiny-e5', dtype: 'q8', cacheDir });
			try {
				assert.equal(offline.dimension, 64);
				assert.deepEqual(requested, []);
			} finally {
				await offline.dispose();
			}
		} finally {
			env.fetch = originalFetch;
		}
	});

	it('loads a model folder given relative to the working directory', async () => {
		const dir = path.join(root, 'relative-model');
		await makeTinyE5(dir, { width: 64 });
		const embedder = await createEmbedder({ model: path.relative(process.cwd(), dir), dtype: 'fp32' });
		try {
			assert.equal(embedder.dimension, 64);
			const [vector] = await embedder.embedQueries(['東京の天気']);
			assert.equal(vector?.length, 64);
		} finally {
			await embedder.dispose();
		}
	});
});
