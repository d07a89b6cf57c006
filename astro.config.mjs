// Builds site-example/, the blog the README's `npm start` serves, with the integration from this repository's sources.
import mdx from '@astrojs/mdx';
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import concierge from './integration/index.ts';

export default defineConfig({
	site: 'https://example.com',
	srcDir: './site-example/src',
	publicDir: './site-example/public',
	outDir: './site-example/dist',
	cacheDir: './site-example/.astro',
	// Every page is prerendered, so dist/client/ can be served as static files; the adapter adds a standalone server.
	output: 'static',
	adapter: node({ mode: 'standalone' }),
	integrations: [
		mdx(),
		concierge({
			// CONCIERGE_MODEL / CONCIERGE_DTYPE let tests and offline builds use the tiny model; unset, the defaults apply.
			model: process.env.CONCIERGE_MODEL ?? undefined,
			dtype: process.env.CONCIERGE_DTYPE ?? undefined,
		}),
	],
});
