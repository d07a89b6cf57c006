import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import concierge from '../../integration/index.ts';
import { parseOptions } from '../../integration/options.ts';

describe('integration options', () => {
	test('fill in the documented defaults', () => {
		const saved = process.env.CHROMA_URL;
		delete process.env.CHROMA_URL;
		try {
			assert.deepEqual(parseOptions(undefined), {
				model: 'Xenova/multilingual-e5-small',
				dtype: 'q8',
				include: ['content/**/*.{md,mdx}', 'pages/**/*.{md,mdx}'],
				exclude: [],
				chunkSize: 300,
				chunkOverlap: 40,
				topK: 6,
				maxDistance: 0.2,
				cacheDir: 'node_modules/.astro/astro-concierge',
				bundle: '.concierge/bundle.jsonl',
				chroma: false,
				collection: 'astro-concierge',
				onError: 'fail',
			});
			process.env.CHROMA_URL = 'http://127.0.0.1:8000';
			assert.deepEqual(parseOptions({}).chroma, { url: 'http://127.0.0.1:8000' });
		} finally {
			if (saved === undefined) delete process.env.CHROMA_URL;
			else process.env.CHROMA_URL = saved;
		}
	});

	test('refuse chunkOverlap not below chunkSize and a bad collection name', () => {
		assert.throws(() => parseOptions({ chunkSize: 100, chunkOverlap: 100 }), /chunkOverlap: chunkOverlap must be smaller than chunkSize/);
		assert.throws(() => parseOptions({ collection: 'a b' }), /collection: expected 3–512 characters/);
	});

	test('refuse an unknown option when the integration is created, naming it', () => {
		assert.throws(() => concierge({ modle: 'x' } as never), (error: Error & { hint?: string }) => {
			assert.match(error.message, /Invalid astro-concierge options/);
			assert.match(error.message, /modle/);
			assert.match(error.hint ?? '', /astro\.config\.mjs/);
			return true;
		});
	});

	test('refuse a wrong value, naming the option and the values it accepts', () => {
		assert.throws(() => parseOptions({ dtype: 'q7' }), /dtype: .*"fp32".*"q8"/s);
		assert.throws(() => parseOptions({ model: '' }), /model: /);
	});
});

describe('the bundle location', () => {
	const config = {
		root: new URL('file:///site/'),
		outDir: new URL('file:///site/dist/'),
		publicDir: new URL('file:///site/public/'),
	};
	const configDone = (bundle: string) => {
		const hooks = concierge({ bundle }).hooks;
		return () => (hooks['astro:config:done'] as (params: unknown) => void)({ config });
	};

	test('is refused inside the public output or the public folder', () => {
		assert.throws(configDone('dist/concierge/bundle.jsonl'), /would be inside outDir/);
		assert.throws(configDone('dist/..bundle.jsonl'), /would be inside outDir/);
		assert.throws(configDone('public/bundle.jsonl'), /would be inside publicDir/);
	});

	test('refuses a Chroma data folder inside the public folder', () => {
		const hooks = concierge({ chroma: { path: 'public/chroma' } }).hooks;
		assert.throws(() => (hooks['astro:config:done'] as (params: unknown) => void)({ config }), /Chroma data folder .* would be inside publicDir/);
	});

	test('is accepted beside them', () => {
		assert.doesNotThrow(configDone('.concierge/bundle.jsonl'));
	});
});
