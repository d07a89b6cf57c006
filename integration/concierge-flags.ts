import { ArticleError } from './article-error.ts';
import type { Frontmatter } from './read-frontmatter.ts';

/** Whether the concierge may index an article and show its launcher on the page. */
export interface ConciergeFlags {
	index: boolean;
	launcher: boolean;
}

/**
 * Reads the `concierge` frontmatter key: `false` opts the article out entirely, `true` or
 * absence opts in, and `{ index?, launcher? }` chooses per feature. Anything else is refused
 * so a typo cannot silently publish or hide an article.
 */
export function readConciergeFlags(frontmatter: Frontmatter, file: string): ConciergeFlags {
	const value = frontmatter.data.concierge;
	if (value === undefined || value === true) return { index: true, launcher: true };
	if (value === false) return { index: false, launcher: false };
	const fail = (path: string[], what: string): never => {
		throw new ArticleError(file, frontmatter.lineOf(path), `frontmatter key \`${path.join('.')}\` ${what}`);
	};
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		return fail(['concierge'], `must be true, false or { index?: boolean, launcher?: boolean }, not ${JSON.stringify(value)}`);
	}
	const flags: ConciergeFlags = { index: true, launcher: true };
	for (const [key, flag] of Object.entries(value)) {
		if (key !== 'index' && key !== 'launcher') fail(['concierge', key], 'is not known; use `index` or `launcher`');
		if (typeof flag !== 'boolean') fail(['concierge', key], `must be true or false, not ${JSON.stringify(flag)}`);
		flags[key as keyof ConciergeFlags] = flag as boolean;
	}
	return flags;
}
