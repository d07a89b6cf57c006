import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AstroConfig, AstroIntegration } from 'astro';
import { AstroError } from 'astro/errors';
import { buildKnowledgeBase } from './build-knowledge-base.ts';
import { parseOptions, type ConciergeUserOptions } from './options.ts';

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
			},
			'astro:config:done': (params) => {
				config = params.config;
				assertPrivateBundle(resolve(fileURLToPath(config.root), options.bundle), config);
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
			'astro:build:done': async ({ dir, logger }) => {
				await buildKnowledgeBase(options, {
					root: fileURLToPath(config.root),
					srcDir: fileURLToPath(config.srcDir),
					publicDir: fileURLToPath(dir),
					urlStyle: { base: config.base, format: config.build.format, trailingSlash: config.trailingSlash },
					pagePathnames,
					logger: logger.fork('astro-concierge:kb'),
				});
			},
		},
	};
}

// The bundle holds every article's text, drafts excluded but unpublished wording included: it must never be served.
function assertPrivateBundle(bundle: string, config: AstroConfig): void {
	for (const [name, url] of [['outDir', config.outDir], ['publicDir', config.publicDir]] as const) {
		const folder = fileURLToPath(url);
		const inside = relative(folder, bundle);
		if (!inside.startsWith('..') && !isAbsolute(inside)) {
			throw new AstroError(
				`astro-concierge: the bundle ${bundle} would be inside ${name} (${folder}), where it would be published`,
				"Set the integration's bundle option to a path outside the site's output and public folders, e.g. '.concierge/bundle.jsonl'.",
			);
		}
	}
}
