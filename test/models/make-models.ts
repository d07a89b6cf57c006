import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTinyE5 } from './tiny-e5.ts';
import { makeTinyLlama } from './tiny-llama.ts';

/** Paths of the tiny models the tests and `npm start -- --fixtures` run on. */
export interface TestModels {
	/** tiny-e5, 64 wide: a Transformers.js feature-extraction model folder. */
	e5: string;
	/** tiny-e5 at e5-small's width (384), for measuring sizes. */
	e5Wide: string;
	/** A GGUF chat model that never emits its end token. */
	llamaEndless: string;
	/** A GGUF chat model that ends its answer by itself. */
	llamaStops: string;
}

const here = fileURLToPath(new URL('.', import.meta.url));
const generators = ['tiny-e5.ts', 'tiny-llama.ts', 'make-models.ts', '../helpers/seeded-random.ts'];

/**
 * Makes the tiny models once per version of their generators and returns where they are.
 * The models are deterministic, so a folder named after the generators' hash never goes stale.
 */
export async function ensureTestModels(root = join(here, '..', '.models')): Promise<TestModels> {
	const hash = createHash('sha256');
	for (const file of generators) hash.update(await readFile(join(here, file)));
	const dir = join(root, hash.digest('hex').slice(0, 16));
	const models: TestModels = {
		e5: join(dir, 'tiny-e5'),
		e5Wide: join(dir, 'tiny-e5-384'),
		llamaEndless: join(dir, 'tiny-llama-endless.gguf'),
		llamaStops: join(dir, 'tiny-llama-stops.gguf'),
	};
	if (existsSync(dir)) return models;

	await mkdir(root, { recursive: true });
	// Made aside and renamed into place, so a concurrent or interrupted run never sees half a set.
	const staging = await mkdtemp(join(root, '.staging-'));
	try {
		await makeTinyE5(join(staging, 'tiny-e5'), { width: 64 });
		await makeTinyE5(join(staging, 'tiny-e5-384'), { width: 384 });
		await makeTinyLlama(join(staging, 'tiny-llama-endless.gguf'), { variant: 'endless' });
		await makeTinyLlama(join(staging, 'tiny-llama-stops.gguf'), { variant: 'stops' });
		await rename(staging, dir).catch((error: NodeJS.ErrnoException) => {
			if (!existsSync(dir)) throw error;
		});
	} finally {
		await rm(staging, { recursive: true, force: true });
	}
	return models;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const models = await ensureTestModels(process.argv[2]);
	for (const [name, path] of Object.entries(models)) process.stdout.write(`${name}\t${path}\n`);
}
