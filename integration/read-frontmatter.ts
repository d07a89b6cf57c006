import type { Yaml } from 'mdast';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { ArticleError } from './article-error.ts';

/** An article's frontmatter as data, plus where each key sits so later checks can point at it. */
export interface Frontmatter {
	data: Record<string, unknown>;
	/** 1-based article line of the key at `path` (e.g. `['concierge', 'index']`), if present. */
	lineOf(path: readonly string[]): number | undefined;
}

/**
 * Reads the YAML frontmatter node of an article, reporting malformed YAML or a
 * frontmatter that is not a mapping at its line in the article.
 */
export function readFrontmatter(node: Yaml | undefined, file: string): Frontmatter {
	if (!node) return { data: {}, lineOf: () => undefined };
	// The node starts at the opening `---`, so YAML line n is article line start + n.
	const offsetLine = node.position?.start.line ?? 1;
	const lines = new LineCounter();
	const document = parseDocument(node.value, { lineCounter: lines, prettyErrors: false });
	const toLine = (offset: number) => offsetLine + lines.linePos(offset).line;

	const [problem] = document.errors;
	if (problem) {
		throw new ArticleError(file, toLine(problem.pos[0]), `malformed YAML frontmatter: ${problem.message}`, { cause: problem });
	}
	let data: unknown;
	try {
		data = document.toJS();
	} catch (error) {
		// Only YAML that survives parsing but not conversion lands here (e.g. an alias bomb).
		throw new ArticleError(file, offsetLine + 1, `unusable YAML frontmatter: ${(error as Error).message}`, { cause: error });
	}
	// An empty frontmatter block is a common placeholder, not a mistake.
	if (data === null || data === undefined) data = {};
	if (typeof data !== 'object' || Array.isArray(data)) {
		throw new ArticleError(file, offsetLine + 1, `frontmatter must be a mapping of keys to values, not ${Array.isArray(data) ? 'a list' : typeof data}`);
	}
	return {
		data: data as Record<string, unknown>,
		lineOf: (path) => {
			const offset = keyOffset(document, path);
			return offset === undefined ? undefined : toLine(offset);
		},
	};
}

function keyOffset(document: Document, path: readonly string[]): number | undefined {
	let node: unknown = document.contents;
	let offset: number | undefined;
	for (const key of path) {
		if (!isMap(node)) return undefined;
		const pair = node.items.find((item) => isScalar(item.key) && item.key.value === key);
		if (!pair) return undefined;
		offset = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
		node = pair.value;
	}
	return offset;
}
