import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AstroConfig, AstroIntegration } from 'astro';
import { AstroError } from 'astro/errors';
import { buildKnowledgeBase } from './build-knowledge-base.ts';
import { copyIslandAssets } from './copy-island-assets.ts';
import { markLauncherOff } from './mark-launcher-off.ts';
import { parseOptions, type ConciergeUserOptions } from './options.ts';
import { serveIslandFiles } from './serve-island-files.ts';
import { islandConfig, START_MODULE, viteIsland } from './vite-plugin-island.ts';

export type { CollectionEntry, ConciergeOptions, ConciergeUserOptions } from './options.ts';

const markdownPage = /\.mdx?$/i;

/** The astro-concierge integration: `integrations: [concierge()]` in astro.config.mjs. */
export default function concierge(userOptions?: ConciergeUserOptions): AstroIntegration {
	const options = parseOptions(userOptions);
	let config: AstroConfig;
	const pagePathnames = new Map<string, string>();
	return {
		name: 'astro-concierge',
		hooks: {
			// Routes are resolved before config:done, so the config is taken as soon as it exists and refreshed after.
			'astro:config:setup': (params) => {
				config = params.config;
				const dev = params.command === 'dev';
				params.updateConfig({
					vite: { plugins: [viteIsland(() => islandConfig(options, { base: config.base, dev }))] },
					markdown: {
						processor: markLauncherOff(config.markdown.processor, {
							root: fileURLToPath(config.root),
							logger: params.logger.fork('astro-concierge:launcher'),
						}),
					},
				});
				// On every page, even one that opted out: the launcher reads the page's marker and stays hidden there.
				if (options.inject) params.injectScript('page', `import ${JSON.stringify(START_MODULE)};`);
			},
			'astro:config:done': (params) => {
				config = params.config;
				const root = fileURLToPath(config.root);
				assertPrivate('bundle', resolve(root, options.bundle), config);
				if (options.chroma && 'path' in options.chroma) assertPrivate('Chroma data folder', resolve(root, options.chroma.path), config);
			},
			'astro:routes:resolved': ({ routes }) => {
				pagePathnames.clear();
				const root = fileURLToPath(config.root);
				for (const route of routes) {
					if (route.type === 'page' && route.pathname !== undefined && markdownPage.test(route.entrypoint)) {
						pagePathnames.set(resolve(root, route.entrypoint), route.pathname);
					}
				}
			},
			'astro:server:setup': ({ server }) => {
				server.middlewares.use(serveIslandFiles(options, fileURLToPath(config.root)));
			},
			'astro:build:done': async ({ dir, logger }) => {
				const root = fileURLToPath(config.root);
				const publicDir = fileURLToPath(dir);
				await buildKnowledgeBase(options, {
					root,
					srcDir: fileURLToPath(config.srcDir),
					publicDir,
					urlStyle: { base: config.base, format: config.build.format, trailingSlash: config.trailingSlash },
					pagePathnames,
					logger: logger.fork('astro-concierge:kb'),
				});
				// Only once kb.json is written: a site whose knowledge base failed gets no island files either.
				await copyIslandAssets(options, { root, publicDir, logger: logger.fork('astro-concierge:island') });
			},
		},
	};
}

// The bundle and a Chroma data folder hold every article's text: neither may be served.
function assertPrivate(what: string, path: string, config: AstroConfig): void {
	for (const [name, url] of [['outDir', config.outDir], ['publicDir', config.publicDir]] as const) {
		const folder = fileURLToPath(url);
		const inside = relative(folder, path);
		if (inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside))) {
			throw new AstroError(
				`astro-concierge: the ${what} ${path} would be inside ${name} (${folder}), where it would be published`,
				`Set the integration's ${what === 'bundle' ? 'bundle' : 'chroma.path'} option to a path outside the site's output and public folders, e.g. '.concierge/'.`,
			);
		}
	}
}
