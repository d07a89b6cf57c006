import type { Root, RootContent } from 'mdast';
import { blocksToText, headingText } from './mdast-to-text.ts';

/** A heading of an article: level, plain text and 1-based line. */
export interface ArticleHeading {
	depth: 1 | 2 | 3 | 4 | 5 | 6;
	text: string;
	line: number;
}

/** The blocks from one heading up to the next, as plain text. */
export interface ArticleSection {
	/** Headings from the top of the article down to this section's own heading (empty before the first heading). */
	path: ArticleHeading[];
	/** Index of this section's heading among all headings of the article, in document order (-1 before the first heading). */
	headingIndex: number;
	/** Plain text of the section's blocks, blocks separated by a blank line. */
	text: string;
	/** 1-based line where the section starts. */
	line: number;
}

/**
 * Splits an article at each heading into sections that remember the chain of headings
 * above them. Every heading gives a section, even an empty one, so headings and sections
 * stay aligned; text before the first heading gives a section only when there is some.
 */
export function splitSections(tree: Root): { headings: ArticleHeading[]; sections: ArticleSection[] } {
	const headings: ArticleHeading[] = [];
	const sections: ArticleSection[] = [];
	const path: ArticleHeading[] = [];
	let blocks: RootContent[] = [];
	let start: { path: ArticleHeading[]; headingIndex: number; line: number | undefined } = {
		path: [],
		headingIndex: -1,
		line: undefined,
	};

	const close = () => {
		const texts = blocks.map((node) => blocksToText([node]));
		const text = texts.filter(Boolean).join('\n\n');
		if (start.headingIndex !== -1 || text) {
			// Before any heading, the section starts where its prose does, not at the frontmatter or imports.
			const line = start.line ?? lineOf(blocks[texts.findIndex(Boolean)]);
			sections.push({ path: start.path, headingIndex: start.headingIndex, text, line });
		}
		blocks = [];
	};

	for (const node of topLevel(tree.children)) {
		if (node.type !== 'heading') {
			blocks.push(node);
			continue;
		}
		close();
		const heading: ArticleHeading = { depth: node.depth, text: headingText(node), line: lineOf(node) };
		while ((path.at(-1)?.depth ?? 0) >= heading.depth) path.pop();
		path.push(heading);
		headings.push(heading);
		start = { path: [...path], headingIndex: headings.length - 1, line: heading.line };
	}
	close();
	return { headings, sections };
}

/**
 * MDX pages often wrap whole parts of an article in a layout component; its headings
 * still structure the article, so block-level JSX is looked through.
 */
function* topLevel(nodes: readonly RootContent[]): Generator<RootContent> {
	for (const node of nodes) {
		if (node.type === 'mdxJsxFlowElement') yield* topLevel(node.children);
		else yield node;
	}
}

function lineOf(node: RootContent | undefined): number {
	return node?.position?.start.line ?? 1;
}
