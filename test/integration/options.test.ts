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
				inject: true,
				endpoint: '/concierge',
				prefetch: false,
				suggestions: { en: [], ja: [] },
				shortcut: 'k',
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

describe('island options', () => {
	test('take an endpoint path or ws(s) URL as given and turn http(s) into ws(s)', () => {
		assert.equal(parseOptions({ endpoint: '/answers' }).endpoint, '/answers');
		assert.equal(parseOptions({ endpoint: 'wss://api.example/concierge' }).endpoint, 'wss://api.example/concierge');
		assert.equal(parseOptions({ endpoint: 'http://127.0.0.1:8787/concierge' }).endpoint, 'ws://127.0.0.1:8787/concierge');
		assert.equal(parseOptions({ endpoint: 'HTTPS://api.example/concierge' }).endpoint, 'wss://api.example/concierge');
		assert.equal(parseOptions({ endpoint: false }).endpoint, false);
	});

	test('refuse an endpoint that is neither a path nor a ws(s) or http(s) URL, naming the option', () => {
		for (const endpoint of ['concierge', 'ftp://api.example/concierge', 'wss://', '', true]) {
			assert.throws(() => parseOptions({ endpoint }), /endpoint: expected false, a path starting with '\/'/, JSON.stringify(endpoint));
		}
	});

	test('end modelHost with a slash and refuse anything but an absolute http(s) URL', () => {
		assert.equal(parseOptions({ modelHost: 'https://models.example/e5' }).modelHost, 'https://models.example/e5/');
		assert.equal(parseOptions({ modelHost: 'http://models.example/' }).modelHost, 'http://models.example/');
		assert.throws(() => parseOptions({ modelHost: '/models/' }), /modelHost: expected an absolute http: or https: URL/);
		assert.throws(() => parseOptions({ modelHost: 'wss://models.example/' }), /modelHost: expected an absolute http: or https: URL/);
	});

	test('use one suggestion list for both languages, or one per language', () => {
		assert.deepEqual(parseOptions({ suggestions: ['Where to start?'] }).suggestions, { en: ['Where to start?'], ja: ['Where to start?'] });
		assert.deepEqual(parseOptions({ suggestions: { ja: ['どこから？'] } }).suggestions, { en: [], ja: ['どこから？'] });
	});

	test('refuse more than 6 suggestions, an empty or overlong one, and an unknown language', () => {
		const message = /suggestions: expected a list of at most 6 questions of 1–200 characters/;
		assert.throws(() => parseOptions({ suggestions: Array.from({ length: 7 }, (_, i) => `q${i}`) }), message);
		assert.throws(() => parseOptions({ suggestions: { en: ['x'.repeat(201)] } }), /suggestions\.en\.0: .*200/);
		assert.throws(() => parseOptions({ suggestions: [''] }), /suggestions\.0: /);
		assert.throws(() => parseOptions({ suggestions: { fr: ['Où ?'] } }), /suggestions: .*"fr"/);
	});

	test('take a single shortcut key or false, and a known language', () => {
		assert.equal(parseOptions({ shortcut: '/' }).shortcut, '/');
		assert.equal(parseOptions({ shortcut: false }).shortcut, false);
		assert.throws(() => parseOptions({ shortcut: 'ctrl+k' }), /shortcut: expected a single key/);
		assert.throws(() => parseOptions({ shortcut: ' ' }), /shortcut: expected a single key/);
		assert.equal(parseOptions({ lang: 'ja' }).lang, 'ja');
		assert.throws(() => parseOptions({ lang: 'fr' }), /lang: .*"en"\|"ja"/);
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
