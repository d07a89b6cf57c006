// Builds site-example/, the blog the README's `npm start` serves, with the integration from this repository's sources.
import { defineConfig } from 'astro/config';
import concierge from './integration/index.ts';

export default defineConfig({
	site: 'https://example.com',
	srcDir: './site-example/src',
	publicDir: './site-example/public',
	outDir: './site-example/dist',
	cacheDir: './site-example/.astro',
	integrations: [concierge()],
});
