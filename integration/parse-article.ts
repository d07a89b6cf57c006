import type { Yaml } from 'mdast';
import { ArticleError } from './article-error.ts';
import { readConciergeFlags } from './concierge-flags.ts';
import { decodeArticle } from './decode-article.ts';
import { parseMarkdown } from './parse-markdown.ts';
import { readFrontmatter } from './read-frontmatter.ts';
import { splitSections, type ArticleHeading, type ArticleSection } from './split-sections.ts';

export { ArticleError } from './article-error.ts';
export type { ArticleHeading, ArticleSection } from './split-sections.ts';

/** One article read for the knowledge base: its frontmatter, settings and sections. */
export interface ParsedArticle {
	file: string;
	frontmatter: Record<string, unknown>;
	/** frontmatter.title, else the first h1's text, else undefined */
	title: string | undefined;
	description: string | undefined;
	lang: string | undefined;
	draft: boolean;
	/** false when frontmatter says `concierge: false` or `concierge: { index: false }` */
	index: boolean;
	/** false when frontmatter says `concierge: false` or `concierge: { launcher: false }` */
	launcher: boolean;
	headings: ArticleHeading[];
	sections: ArticleSection[];
}

/**
 * Parses one markdown or MDX article (MDX when `file` ends in `.mdx`) into its frontmatter
 * and heading sections, throwing an {@link ArticleError} that names the file (and line)
 * for anything that should stop the build.
 */
export function parseArticle(source: Uint8Array | string, file: string): ParsedArticle {
	const text = decodeArticle(source, file);
	const tree = parseMarkdown(text, { mdx: /\.mdx$/i.test(file) });
	const yaml = tree.children.find((node): node is Yaml => node.type === 'yaml');
	const frontmatter = readFrontmatter(yaml, file);
	if (tree.children.every((node) => node.type === 'yaml')) throw new ArticleError(file, undefined, 'empty article');
	const { index, launcher } = readConciergeFlags(frontmatter, file);
	const { headings, sections } = splitSections(tree);
	const data = frontmatter.data;
	return {
		file,
		frontmatter: data,
		title: stringValue(data.title) ?? headings.find((heading) => heading.depth === 1)?.text,
		description: stringValue(data.description),
		lang: stringValue(data.lang),
		draft: data.draft === true,
		index,
		launcher,
		headings,
		sections,
	};
}

function stringValue(value: unknown): string | undefined {
	return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}
