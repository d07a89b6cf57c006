import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AstroIntegrationLogger } from 'astro';
import { copyIslandAssets } from '../../integration/copy-island-assets.ts';
import { parseOptions } from '../../integration/options.ts';
import { ensureTestModels } from '../models/make-models.ts';

const logger = { info: () => {} } as unknown as AstroIntegrationLogger;

// The island build test covers a local model folder; these cover the Hub cache and a broken folder.
describe('copying the island files into the build output', () => {
	let root: string;
	let e5: string;

	before(async () => {
		({ e5 } = await ensureTestModels());
		root = await mkdtemp(join(tmpdir(), 'concierge-copy-'));
	});

	after(async () => {
		if (root) await rm(root, { recursive: true, force: true });
	});

	test('takes a Hub model from where the build downloaded it, under its id', async () => {
		const id = 'Xenova/multilingual-e5-small';
		// Transformers.js keeps a Hub download at <cacheDir>/models/<id>/<file>; the tiny model stands in for it.
		await cp(e5, join(root, 'cache', 'models', id), { recursive: true });
		const publicDir = join(root, 'dist-hub');
		const report = await copyIslandAssets(parseOptions({ model: id, cacheDir: 'cache' }), { root, publicDir, logger });
		assert.equal(report.model?.name, id);
		for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx']) {
			assert.deepEqual(await readFile(join(publicDir, 'concierge', 'models', id, file)), await readFile(join(e5, file)), file);
		}
	});

	test('stops at a missing model file, naming it, and copies none of the model', async () => {
		const folder = join(root, 'broken-e5');
		await cp(e5, folder, { recursive: true, filter: (source) => !source.endsWith('tokenizer.json') });
		const publicDir = join(root, 'dist-broken');
		await assert.rejects(
			copyIslandAssets(parseOptions({ model: folder }), { root, publicDir, logger }),
			(error: Error) => error.message.includes(`${join(folder, 'tokenizer.json')} is missing`),
		);
		assert.equal(existsSync(join(publicDir, 'concierge', 'models')), false);
	});
});
