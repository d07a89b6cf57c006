import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AstroConfig, AstroIntegrationLogger } from 'astro';
import type { Yaml } from 'mdast';
import { ArticleError } from './article-error.ts';
import { readConciergeFlags } from './concierge-flags.ts';
import { parseMarkdown } from './parse-markdown.ts';
import { readFrontmatter } from './read-frontmatter.ts';
import { LAUNCHER_OFF_ATTRIBUTE } from './runtime/island-config.ts';

type MarkdownProcessor = AstroConfig['markdown']['processor'];

/** Rendered into a page whose frontmatter says `concierge: false` or `{ launcher: false }`; the launcher looks for it. */
export const LAUNCHER_OFF_MARKER = `<template ${LAUNCHER_OFF_ATTRIBUTE}="off"></template>`;

/**
 * Wraps the site's markdown processor so that every .md and .mdx page or entry whose frontmatter turns the launcher
 * off ends with {@link LAUNCHER_OFF_MARKER}. Astro 7's default processor (Sätteri) runs no remark plugins, so the
 * processor interface, which every processor implements, is the one place that sees all markdown.
 */
export function markLauncherOff(
	processor: MarkdownProcessor,
	context: { root: string; logger: AstroIntegrationLogger },
): MarkdownProcessor {
	// The frontmatter Astro passes along has been through a collection's schema, which may drop `concierge`;
	// the file itself also gives the line a bad value is on.
	const launcherOff = async (file: URL | string | undefined): Promise<boolean> => {
		if (file === undefined) return false;
		const path = file instanceof URL ? fileURLToPath(file) : file;
		const name = relative(context.root, path);
		try {
			const text = (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
			const tree = parseMarkdown(text, { mdx: /\.mdx$/i.test(path) });
			const yaml = tree.children.find((node): node is Yaml => node.type === 'yaml');
			return !readConciergeFlags(readFrontmatter(yaml, name), name).launcher;
		} catch (error) {
			// Not fatal here: the knowledge-base build at the end reports a bad value of an indexed article together
			// with every other problem (and `astro dev` runs no such build), so rendering only warns.
			if (!(error instanceof ArticleError)) throw error;
			context.logger.warn(`${error.message}; the launcher stays on this page`);
			return false;
		}
	};
	const wrapped: MarkdownProcessor = {
		name: processor.name,
		// The same object, not a copy: integrations and @astrojs/mdx read and extend the processor's options in place.
		get options() {
			return processor.options;
		},
		createRenderer: async (shared) => {
			const renderer = await processor.createRenderer(shared);
			return {
				render: async (content, options) => {
					const result = await renderer.render(content, options);
					if (await launcherOff(options?.fileURL)) result.code += LAUNCHER_OFF_MARKER;
					return result;
				},
			};
		},
	};
	if (processor.createMdxRenderer) {
		const createMdxRenderer = processor.createMdxRenderer.bind(processor);
		wrapped.createMdxRenderer = async (shared, mdx) => {
			const renderer = await createMdxRenderer(shared, mdx);
			return {
				// MDX compiles to JavaScript, so the marker goes in as a JSX element at the end of the source;
				// appended after the last line, it moves no line that an error or a source map points at.
				process: async (content, filePath, frontmatter) =>
					renderer.process((await launcherOff(filePath)) ? `${content}\n\n${LAUNCHER_OFF_MARKER}\n` : content, filePath, frontmatter),
			};
		};
	}
	return wrapped;
}
