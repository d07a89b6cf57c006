import { AstroError } from 'astro/errors';
import { z } from 'astro/zod';
import { CONCIERGE_PATH } from '../sidecar/protocol.ts';
import { ISLAND_LANGUAGES } from './runtime/island-config.ts';

/** What the `url` option receives for each content collection entry. */
export interface CollectionEntry {
	/** Collection folder name under src/content, e.g. `blog`. */
	collection: string;
	/** Entry id as Astro's glob loader makes it: the path inside the collection without extension, slugified. */
	id: string;
	/** Absolute path of the markdown file. */
	file: string;
	/** The entry's frontmatter. */
	data: Record<string, unknown>;
}

const dtypes = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'bnb4', 'q4f16'] as const;

// The page connects with `new WebSocket(endpoint)`, which takes ws(s) URLs; http(s) ones are accepted as owners
// write them and turned into the equivalent ws(s) URL here rather than in every browser.
const endpointSchema = z
	.custom<string | false>(
		(value) =>
			value === false ||
			(typeof value === 'string' && (value.startsWith('/') || (/^(?:wss?|https?):\/\/[^/]/i.test(value) && URL.canParse(value)))),
		{ message: "expected false, a path starting with '/', or an absolute ws:, wss:, http: or https: URL" },
	)
	.transform((value) => (value === false ? value : value.replace(/^https:/i, 'wss:').replace(/^http:/i, 'ws:')));

const suggestionList = z.array(z.string().trim().min(1).max(200)).max(6);

/** Every option of the integration, with its default. Unknown keys are refused so a typo fails the build at once. */
export const optionsSchema = z
	.object({
		/**
		 * Embedding model: a Hugging Face model id, or a path to a local model folder (relative to the project root).
		 * The browser loads exactly this model, so the build and the visitor's query produce comparable vectors.
		 * @default 'Xenova/multilingual-e5-small'
		 */
		model: z.string().min(1).default('Xenova/multilingual-e5-small'),
		/**
		 * Weight precision of the embedding model, written into kb.json for the browser.
		 * `q8` is what the browser loads fastest; the build uses the same.
		 * @default 'q8'
		 */
		dtype: z.enum(dtypes).default('q8'),
		/**
		 * Globs of the articles to index, relative to `srcDir`. Markdown (.md) and MDX (.mdx) files.
		 * @default ['content/**\/*.{md,mdx}', 'pages/**\/*.{md,mdx}']
		 */
		include: z.array(z.string().min(1)).min(1).default(['content/**/*.{md,mdx}', 'pages/**/*.{md,mdx}']),
		/**
		 * Globs, relative to `srcDir`, of files never to index even when `include` matches them.
		 * @default []
		 */
		exclude: z.array(z.string().min(1)).default([]),
		/**
		 * Page URL of a content collection entry, without the site's `base` (it is added, and `build.format` and
		 * `trailingSlash` are applied as for a routed page). Return `undefined` to leave the entry out.
		 * @default (entry) => `/${entry.collection}/${entry.id}/`
		 */
		url: z
			.custom<(entry: CollectionEntry) => string | undefined>((value) => typeof value === 'function', {
				message: 'expected a function (entry) => string',
			})
			.optional(),
		/**
		 * Largest chunk, in the embedding model's tokens, counted over the whole embedded string
		 * (prefix, title, heading path and text). e5 reads at most 512.
		 * @default 300
		 */
		chunkSize: z.number().int().min(32).max(500).default(300),
		/**
		 * Tokens of a chunk's end repeated at the start of the next chunk of the same section.
		 * @default 40
		 */
		chunkOverlap: z.number().int().min(0).default(40),
		/**
		 * Most chunks a search returns, in the browser and in the sidecar.
		 * @default 6
		 */
		topK: z.number().int().min(1).max(50).default(6),
		/**
		 * Largest cosine distance (1 − cosine) a chunk may have from the question to be used.
		 * multilingual-e5's cosines cluster between 0.7 and 0.9, so related text sits below about 0.2.
		 * @default 0.2
		 */
		maxDistance: z.number().gt(0).max(2).default(0.2),
		/**
		 * Folder for the embedding cache, relative to the project root, so a rebuild embeds only new or changed chunks.
		 * @default 'node_modules/.astro/astro-concierge'
		 */
		cacheDir: z.string().min(1).default('node_modules/.astro/astro-concierge'),
		/**
		 * Where the private bundle (chunk texts and embeddings, for the sidecar) is written, relative to the project root.
		 * It must stay outside the public output.
		 * @default '.concierge/bundle.jsonl'
		 */
		bundle: z.string().min(1).default('.concierge/bundle.jsonl'),
		/**
		 * Also write the chunks into ChromaDB at build time: `{ url }` of a running server, or `{ path }` of a data
		 * folder (relative to the project root) for a Chroma server the build starts and stops itself.
		 * `false` leaves Chroma to the sidecar, which loads the bundle.
		 * @default { url: process.env.CHROMA_URL } when that is set, else false
		 */
		chroma: z
			.union([z.literal(false), z.object({ url: z.url() }).strict(), z.object({ path: z.string().min(1) }).strict()])
			.default(() => (process.env.CHROMA_URL ? { url: process.env.CHROMA_URL } : false)),
		/**
		 * Chroma collection name: 3–512 characters of letters, digits, `.`, `_` and `-`.
		 * @default 'astro-concierge'
		 */
		collection: z
			.string()
			.regex(/^[a-zA-Z0-9._-]{3,512}$/, 'expected 3–512 characters of letters, digits, ".", "_" and "-"')
			.default('astro-concierge'),
		/**
		 * What a bad article, a dead link or an unreachable Chroma does: stop the build, or log a warning and skip it.
		 * @default 'fail'
		 */
		onError: z.enum(['fail', 'warn']).default('fail'),
		/**
		 * Add the floating concierge launcher to every page. With `false`, only pages that render the
		 * `<Concierge />` component (`astro-concierge/Concierge.astro`) get the concierge.
		 * @default true
		 */
		inject: z.boolean().default(true),
		/**
		 * Where the island asks for answers: the sidecar's WebSocket path on the page's own origin, or an absolute
		 * ws:, wss:, http: or https: URL (http(s) is used as ws(s)). `false` turns answers off: search only.
		 * @default '/concierge'
		 */
		endpoint: endpointSchema.default(CONCIERGE_PATH),
		/**
		 * Absolute http(s) URL of a folder holding the embedding model's folder (`<model>/config.json`, …), for static
		 * hosts that refuse large files. When set, the build does not copy the model into its output.
		 * @default undefined (the model is served from `<base>concierge/models/`)
		 */
		modelHost: z
			.url({ protocol: /^https?$/, message: 'expected an absolute http: or https: URL of a folder' })
			.transform((url) => (url.endsWith('/') ? url : `${url}/`))
			.optional(),
		/**
		 * Load the search runtime, the model and kb.json while the browser is idle, not when the visitor first opens the concierge.
		 * @default false
		 */
		prefetch: z.boolean().default(false),
		/**
		 * Language of the concierge's own texts; absent, it follows the page's `<html lang>`.
		 * @default undefined
		 */
		lang: z.enum(ISLAND_LANGUAGES).optional(),
		/**
		 * Example questions offered in an empty conversation: one list for both languages, or `{ en, ja }`.
		 * At most 6 per language, each 1–200 characters.
		 * @default []
		 */
		suggestions: z
			.union([suggestionList, z.object({ en: suggestionList.optional(), ja: suggestionList.optional() }).strict()], {
				error: 'expected a list of at most 6 questions of 1–200 characters, or { en?: [...], ja?: [...] } of such lists',
			})
			.default([])
			// One list serves both languages.
			.transform((value) => (Array.isArray(value) ? { en: value, ja: value } : { en: value.en ?? [], ja: value.ja ?? [] })),
		/**
		 * The key that opens the concierge together with Ctrl (⌘ on Apple devices); `false` for no shortcut.
		 * @default 'k'
		 */
		shortcut: z
			.union([
				z.literal(false),
				z.string().refine((key) => [...key].length === 1 && key.trim() === key, { message: 'expected a single key such as "k" or "/"' }),
			])
			.default('k'),
	})
	.strict()
	.refine((options) => options.chunkOverlap < options.chunkSize, {
		message: 'chunkOverlap must be smaller than chunkSize',
		path: ['chunkOverlap'],
	});

/** Options as a user writes them in astro.config.mjs. */
export type ConciergeUserOptions = z.input<typeof optionsSchema>;
/** Options after defaults are applied. */
export type ConciergeOptions = z.output<typeof optionsSchema>;

/** Validates user options, throwing an Astro error that names each wrong option and what it expects. */
export function parseOptions(input: unknown): ConciergeOptions {
	const result = optionsSchema.safeParse(input ?? {});
	if (result.success) return result.data;
	const problems = result.error.issues.map((issue) => {
		const where = issue.path.length ? issue.path.join('.') : 'options';
		return `- ${where}: ${issue.message}`;
	});
	throw new AstroError(
		`Invalid astro-concierge options:\n${problems.join('\n')}`,
		'Check the options passed to concierge() in astro.config.mjs; the README lists each option with its type and default.',
	);
}
