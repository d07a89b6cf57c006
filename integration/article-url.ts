import { slug } from 'github-slugger';
import { relative, sep } from 'node:path';
import type { CollectionEntry } from './options.ts';

/** The parts of Astro's config that decide how a page's URL is written. */
export interface UrlStyle {
	/** `base` from the Astro config, e.g. `/` or `/blog`. */
	base: string;
	format: 'directory' | 'file' | 'preserve';
	trailingSlash: 'always' | 'never' | 'ignore';
}

/** Where an article's URL comes from: its route (src/pages) or its collection entry (src/content). */
export type ArticleOrigin =
	| { kind: 'page'; pathname: string; isIndex: boolean }
	| { kind: 'collection'; entry: CollectionEntry };

/**
 * Tells whether a file is a page or a collection entry. `pagePathnames` maps the absolute path of each
 * static markdown route to the pathname Astro gave it; the collection entry id follows Astro's glob loader
 * (frontmatter `slug`, else the path with each segment slugified and a trailing `index` dropped).
 */
export function articleOrigin(
	file: string,
	data: Record<string, unknown>,
	context: { srcDir: string; pagePathnames: ReadonlyMap<string, string> },
): ArticleOrigin | undefined {
	const pathname = context.pagePathnames.get(file);
	const inSrc = relative(context.srcDir, file).split(sep);
	if (pathname !== undefined) {
		return { kind: 'page', pathname, isIndex: /^index\.mdx?$/i.test(inSrc.at(-1) ?? '') };
	}
	if (inSrc[0] !== 'content' || inSrc.length < 3) return undefined;
	const [, collection, ...rest] = inSrc as [string, string, ...string[]];
	const withoutExtension = rest.join('/').replace(/\.mdx?$/i, '');
	const id =
		typeof data.slug === 'string' && data.slug !== ''
			? data.slug
			: withoutExtension
					.split('/')
					.map((segment) => slug(segment))
					.join('/')
					.replace(/\/index$/, '');
	return { kind: 'collection', entry: { collection, id, file, data } };
}

/** A collection entry's default URL, for sites whose pages live at `/<collection>/<id>/`. */
export function defaultEntryUrl(entry: CollectionEntry): string {
	return `/${entry.collection}/${entry.id}/`;
}

/**
 * Writes a site path the way the built site links it: under `base`, with the trailing slash or `.html`
 * that the build format gives, and percent-encoded (non-ASCII file names included).
 */
export function formatPageUrl(pathname: string, isIndex: boolean, style: UrlStyle): string {
	let path = pathname.startsWith('/') ? pathname : `/${pathname}`;
	if (path !== '/') {
		path = path.replace(/\/+$/, '');
		const asFile = style.format === 'file' || (style.format === 'preserve' && !isIndex);
		if (asFile) path += '.html';
		else if (style.trailingSlash !== 'never') path += '/';
	}
	return withBase(path, style.base);
}

/** Puts a site path under `base` and percent-encodes it, leaving existing escapes alone. */
export function withBase(path: string, base: string): string {
	const prefix = base.replace(/\/+$/, '');
	const joined = `${prefix}${path.startsWith('/') ? path : `/${path}`}`;
	return encodeURI(safeDecode(joined));
}

function safeDecode(path: string): string {
	try {
		return decodeURI(path);
	} catch {
		return path;
	}
}
