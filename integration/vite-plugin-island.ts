import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AstroConfig } from 'astro';
import { AstroError } from 'astro/errors';
import { ASSETS_FOLDER, MODELS_FOLDER } from './island-files.ts';
import type { ConciergeOptions } from './options.ts';
import type { IslandConfig } from './runtime/island-config.ts';

/** Default-exports the {@link IslandConfig} of this site. */
export const CONFIG_MODULE = 'virtual:astro-concierge/config';
/** Starts the concierge on the page that imports it; the injected script and `<Concierge />` both import it. */
export const START_MODULE = 'virtual:astro-concierge/start';
/** Default-exports a constructor of the island's search worker (runtime/search-worker), bundled by Vite as a worker entry. */
export const WORKER_MODULE = 'virtual:astro-concierge/search-worker';

type VitePlugin = NonNullable<AstroConfig['vite']['plugins']>[number];

/** What the island is told about this site: where its files are, where answers come from, and its UI settings. */
export function islandConfig(options: ConciergeOptions, site: { base: string; dev: boolean }): IslandConfig {
	const assetsUrl = `${site.base.replace(/\/+$/, '')}/${ASSETS_FOLDER}`;
	return {
		assetsUrl,
		modelsUrl: options.modelHost ?? `${site.base.replace(/\/+$/, '')}/${MODELS_FOLDER}`,
		endpoint: options.endpoint === false ? null : options.endpoint,
		prefetch: options.prefetch,
		lang: options.lang ?? null,
		suggestions: options.suggestions,
		shortcut: options.shortcut === false ? null : options.shortcut,
		dev: site.dev,
	};
}

/**
 * A browser module of runtime/ beside this file: `.ts` when the integration runs from its sources, `.js` from the
 * published package, whose sources were compiled away.
 */
export function runtimeModulePath(name: string): string {
	const candidates = [`${name}.ts`, `${name}.js`].map((file) => fileURLToPath(new URL(`./runtime/${file}`, import.meta.url)));
	const found = candidates.find((candidate) => existsSync(candidate));
	if (!found) throw new AstroError(`astro-concierge: the island's ${name} module is missing; looked for ${candidates.join(' and ')}`, 'Reinstall astro-concierge.');
	// Vite reads import specifiers as `/`-separated paths, so Windows backslashes would not resolve.
	return found.replaceAll('\\', '/');
}

/** Serves the virtual modules; `config` is read at load time so it reflects the final Astro config. */
export function viteIsland(config: () => IslandConfig): VitePlugin {
	const resolved = new Map([CONFIG_MODULE, START_MODULE, WORKER_MODULE].map((id) => [id, `\0${id}`]));
	return {
		name: 'astro-concierge:island',
		resolveId: (id: string) => resolved.get(id),
		load: (id: string) => {
			if (id === resolved.get(CONFIG_MODULE)) return `export default ${JSON.stringify(config())};`;
			if (id === resolved.get(START_MODULE)) {
				return [
					`import { startConcierge } from ${JSON.stringify(runtimeModulePath('launcher'))};`,
					`import config from ${JSON.stringify(CONFIG_MODULE)};`,
					'startConcierge(config);',
				].join('\n');
			}
			// Vite's `?worker` import bundles the worker and its imports as a separate entry, in build and in dev.
			if (id === resolved.get(WORKER_MODULE)) return `export { default } from ${JSON.stringify(`${runtimeModulePath('search-worker')}?worker`)};`;
			return undefined;
		},
	};
}
