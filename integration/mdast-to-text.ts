import type { Heading, Nodes, PhrasingContent, RootContent, Table } from 'mdast';

/**
 * Plain text of a heading on one line: inline code, emphasis and links flattened to their
 * text, markup, expressions and images left out.
 */
export function headingText(heading: Heading): string {
	return phrasing(heading.children).replace(/\s+/g, ' ').trim();
}

/**
 * Plain text of a run of blocks, separated by a blank line: what a reader sees, without
 * markup, raw HTML, JSX tags and attributes, ESM, expressions, images or URLs.
 */
export function blocksToText(nodes: readonly RootContent[]): string {
	return nodes.map(block).filter(Boolean).join('\n\n');
}

function block(node: Nodes): string {
	switch (node.type) {
		case 'paragraph':
		case 'heading':
			return tidy(phrasing(node.children));
		case 'code':
			return node.value;
		case 'blockquote':
		case 'footnoteDefinition':
		case 'mdxJsxFlowElement':
			return blocksToText(node.children);
		case 'list':
			return lines(node.children.map((item) => lines(item.children.map(block))));
		case 'table':
			return table(node);
		default:
			// html, yaml, ESM, expressions, thematic breaks and definitions carry no prose.
			return '';
	}
}

function table(node: Table): string {
	return lines(node.children.map((row) => row.children.map((cell) => tidy(phrasing(cell.children))).join(' | ')));
}

function phrasing(nodes: readonly PhrasingContent[]): string {
	let text = '';
	for (const node of nodes) {
		switch (node.type) {
			case 'text':
			case 'inlineCode':
				text += node.value;
				break;
			case 'break':
				text += '\n';
				break;
			case 'emphasis':
			case 'strong':
			case 'delete':
			case 'link':
			case 'linkReference':
			case 'mdxJsxTextElement':
				text += phrasing(node.children);
				break;
			default:
			// html, images, footnote references and expressions are not read as prose.
		}
	}
	return text;
}

function lines(parts: readonly string[]): string {
	return parts.filter(Boolean).join('\n');
}

/** Dropped inline nodes leave doubled spaces behind; source line breaks are kept. */
function tidy(text: string): string {
	return text
		.split('\n')
		.map((line) => line.replace(/[ \t]+/g, ' ').trim())
		.filter(Boolean)
		.join('\n');
}
