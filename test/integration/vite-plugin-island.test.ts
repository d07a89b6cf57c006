import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseOptions } from '../../integration/options.ts';
import { CONFIG_MODULE, islandConfig, START_MODULE, viteIsland, WORKER_MODULE } from '../../integration/vite-plugin-island.ts';

describe('the island config', () => {
	test('puts the concierge folder under the base whether or not the base ends in a slash', () => {
		const options = parseOptions({});
		for (const [base, assetsUrl] of [['/', '/concierge/'], ['/docs', '/docs/concierge/'], ['/docs/', '/docs/concierge/']] as const) {
			const config = islandConfig(options, { base, dev: false });
			assert.equal(config.assetsUrl, assetsUrl);
			assert.equal(config.modelsUrl, `${assetsUrl}models/`);
		}
	});

	test('passes the options on, with null for what is turned off', () => {
		const options = parseOptions({ endpoint: false, shortcut: false, modelHost: 'https://models.example/e5', prefetch: true, lang: 'ja' });
		assert.deepEqual(islandConfig(options, { base: '/', dev: true }), {
			assetsUrl: '/concierge/',
			modelsUrl: 'https://models.example/e5/',
			endpoint: null,
			prefetch: true,
			lang: 'ja',
			suggestions: { en: [], ja: [] },
			shortcut: null,
			dev: true,
		});
		const defaults = islandConfig(parseOptions({ suggestions: ['Why?'] }), { base: '/', dev: false });
		assert.equal(defaults.endpoint, '/concierge');
		assert.equal(defaults.lang, null);
		assert.equal(defaults.shortcut, 'k');
		assert.deepEqual(defaults.suggestions, { en: ['Why?'], ja: ['Why?'] });
	});
});

describe('the island Vite plugin', () => {
	type Hook = (id: string) => string | undefined;
	const plugin = viteIsland(() => islandConfig(parseOptions({}), { base: '/docs', dev: false })) as unknown as { resolveId: Hook; load: Hook };
	const load = (id: string) => {
		const resolved = plugin.resolveId(id);
		assert.ok(resolved, `${id} is not resolved`);
		return plugin.load(resolved) ?? '';
	};

	test('serves the config as JSON', () => {
		const code = load(CONFIG_MODULE);
		assert.deepEqual(JSON.parse(code.replace(/^export default /, '').replace(/;$/, '')), islandConfig(parseOptions({}), { base: '/docs', dev: false }));
	});

	test('starts the launcher beside the running integration with that config', () => {
		const code = load(START_MODULE);
		const launcher = /import \{ startConcierge \} from "([^"]+)";/.exec(code)?.[1];
		assert.ok(launcher && existsSync(launcher), code);
		assert.match(launcher, /\/integration\/runtime\/launcher\.ts$/);
		assert.match(code, new RegExp(`import config from "${CONFIG_MODULE}";\nstartConcierge\\(config\\);`));
	});

	test('hands the search worker to Vite as a worker entry', () => {
		const worker = /from "([^"?]+)\?worker"/.exec(load(WORKER_MODULE))?.[1];
		assert.ok(worker && existsSync(worker));
		assert.match(worker, /\/integration\/runtime\/search-worker\.ts$/);
	});

	test('leaves other modules alone', () => {
		assert.equal(plugin.resolveId('virtual:other'), undefined);
		assert.equal(plugin.load('/src/pages/index.astro'), undefined);
	});
});
