import type { Root, RootContent } from 'mdast';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkMdx from 'remark-mdx';
import remarkParse from 'remark-parse';
import { unified } from 'unified';

const markdown = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm).freeze();
const mdx = unified().use(remarkParse).use(remarkMdx).use(remarkFrontmatter, ['yaml']).use(remarkGfm).freeze();

/**
 * Parses markdown or MDX into mdast with YAML frontmatter and GFM.
 * MDX that remark-mdx rejects is read again as plain markdown minus its ESM, because one
 * broken component on a page should not cost the whole article its place in the index.
 */
export function parseMarkdown(text: string, options: { mdx: boolean }): Root {
	if (!options.mdx) return markdown.parse(text);
	try {
		return mdx.parse(text);
	} catch {
		const tree = markdown.parse(text);
		tree.children = tree.children.filter((node) => !isEsmParagraph(node, text));
		return tree;
	}
}

/**
 * Plain markdown reads an MDX `import`/`export` block as a paragraph; working on the tree
 * rather than on lines leaves `import` lines inside code blocks alone.
 */
function isEsmParagraph(node: RootContent, text: string): boolean {
	if (node.type !== 'paragraph' || node.position?.start.offset === undefined) return false;
	const start = node.position.start.offset;
	return /^(?:import|export)\s/.test(text.slice(start, start + 7));
}
