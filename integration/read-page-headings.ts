import { toString } from 'hast-util-to-string';
import rehypeParse from 'rehype-parse';
import { unified } from 'unified';
import { visit } from 'unist-util-visit';
import type { Element, Root } from 'hast';

/** A heading as Astro rendered it: its level, its `id` and its text. */
export interface PageHeading {
	depth: number;
	id: string;
	text: string;
}

/** What a built page offers for linking into it. */
export interface PageHeadings {
	/** Headings that carry an id, in document order. */
	headings: PageHeading[];
	/** Every id on the page, so a link's target can be checked. */
	ids: Set<string>;
}

const parser = unified().use(rehypeParse);
const headingTag = /^h([1-6])$/;

/** Reads the headings and ids of a built HTML page. */
export function readPageHeadings(html: string): PageHeadings {
	const tree = parser.parse(html) as Root;
	const headings: PageHeading[] = [];
	const ids = new Set<string>();
	visit(tree, 'element', (node: Element) => {
		const id = node.properties.id;
		if (typeof id !== 'string' || id === '') return;
		ids.add(id);
		const level = headingTag.exec(node.tagName);
		if (level) headings.push({ depth: Number(level[1]), id, text: normalizeHeadingText(toString(node)) });
	});
	return { headings, ids };
}

/**
 * Compares heading texts from markdown and from HTML alike: Astro's smartypants turns quotes into curly ones,
 * `--` and `---` into dashes and `...` into an ellipsis, so both sides are brought to the plain forms;
 * whitespace runs collapse and ends are trimmed.
 */
export function normalizeHeadingText(text: string): string {
	return text
		.replace(/[\u2018\u2019]/g, "'")
		.replace(/[\u201c\u201d]/g, '"')
		.replace(/\u2026/g, '...')
		.replace(/[\u2013\u2014]|-{2,3}/g, '-')
		.replace(/\s+/g, ' ')
		.trim();
}

/**
 * Pairs each markdown heading, in order, with the rendered heading of the same text, searching forward
 * so headings the layout adds around the article are skipped. A heading with no rendered twin gets ''.
 */
export function matchHeadingIds(markdownHeadings: readonly string[], page: Pick<PageHeadings, 'headings'>): string[] {
	const ids: string[] = [];
	let next = 0;
	for (const text of markdownHeadings) {
		const wanted = normalizeHeadingText(text);
		let found = -1;
		for (let i = next; i < page.headings.length; i++) {
			if (page.headings[i]!.text === wanted) {
				found = i;
				break;
			}
		}
		if (found === -1) {
			ids.push('');
			continue;
		}
		ids.push(page.headings[found]!.id);
		next = found + 1;
	}
	return ids;
}
