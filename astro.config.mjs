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
			// `npm start -- --fixtures` sets these to build with the tiny test model offline; unset, the defaults apply.
			// (CONCIERGE_MODEL is the sidecar's GGUF, so the embedding model has names of its own.)
			model: process.env.CONCIERGE_EMBEDDING_MODEL || undefined,
			dtype: process.env.CONCIERGE_EMBEDDING_DTYPE || undefined,
			maxDistance: process.env.CONCIERGE_MAX_DISTANCE ? Number(process.env.CONCIERGE_MAX_DISTANCE) : undefined,
			suggestions: {
				en: ['How do I back up PostgreSQL?', 'How do I run a site with systemd and nginx?'],
				ja: ['京都の紅葉はいつが見頃ですか？', 'SSH の設定ファイルの書き方は？'],
			},
		}),
	],
});
