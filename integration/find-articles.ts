import { glob } from 'node:fs/promises';
import { resolve } from 'node:path';

/** Options of {@link findArticles}. */
export interface FindArticlesOptions {
	/** Absolute `srcDir` of the site; the globs are relative to it. */
	srcDir: string;
	include: readonly string[];
	exclude: readonly string[];
}

const markdown = /\.mdx?$/i;

/** Lists the markdown and MDX files the globs select, as sorted absolute paths, so every build sees them in one order. */
export async function findArticles(options: FindArticlesOptions): Promise<string[]> {
	const found = new Set<string>();
	for await (const relative of glob([...options.include], { cwd: options.srcDir, exclude: [...options.exclude] })) {
		// Astro never routes files or folders whose name starts with an underscore, so neither do we.
		if (!markdown.test(relative) || relative.split(/[\\/]/).some((part) => part.startsWith('_'))) continue;
		found.add(resolve(options.srcDir, relative));
	}
	return [...found].sort();
}
