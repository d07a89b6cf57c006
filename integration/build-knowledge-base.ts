import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { AstroIntegrationLogger } from 'astro';
import { AstroError } from 'astro/errors';
import { articleOrigin, defaultEntryUrl, formatPageUrl, type UrlStyle } from './article-url.ts';
import { BUNDLE_FORMAT, BUNDLE_VERSION, formatBundle, type BundleChunk, type BundleHeader } from './bundle.ts';
import { chunkArticle, type ArticleChunk, type SectionToChunk } from './chunk-article.ts';
import { createEmbedder, requiredFiles, type DownloadProgress, type Embedder } from './create-embedder.ts';
import { embedChunks } from './embed-chunks.ts';
import { openEmbeddingCache, type EmbeddingCache } from './embedding-cache.ts';
import { encodeKb } from './encode-kb.ts';
import { findArticles } from './find-articles.ts';
import type { ConciergeOptions } from './options.ts';
import { PACKAGE_VERSION } from './package-version.ts';
import { ArticleError, parseArticle, type ParsedArticle } from './parse-article.ts';
import { matchHeadingIds, readPageHeadings } from './read-page-headings.ts';
import { E5_PASSAGE_PREFIX, E5_QUERY_PREFIX } from './runtime/e5.ts';
import type { ChromaClient } from 'chromadb';
import { startChromaServer } from '../sidecar/chroma-server.ts';
import { connectChroma, syncChroma } from './sync-chroma.ts';
import { stageFile, type StagedFile } from './write-file-atomic.ts';
import { isLocalModel, modelSource } from './model-source.ts';

/** Where the build is and how its pages are addressed. */
export interface BuildContext {
	/** Project root (absolute). */
	root: string;
	/** Astro's srcDir (absolute). */
	srcDir: string;
	/** Folder the site's public files were written to (absolute): `dist/`, or `dist/client/` with a server adapter. */
	publicDir: string;
	urlStyle: UrlStyle;
	/** Absolute path of each static markdown page → the pathname Astro routed it to. */
	pagePathnames: ReadonlyMap<string, string>;
	logger: AstroIntegrationLogger;
}

/** What a knowledge-base build wrote. */
export interface BuildReport {
	articles: number;
	chunks: number;
	embedded: number;
	reused: number;
	contentVersion: string;
	kbPath: string;
	bundlePath: string;
}

/** Public path of kb.json inside the build output. */
export const KB_PATH = 'concierge/kb.json';

/** The last good kb.json, kept beside the bundle for `astro dev`, which has no build output to read. */
export function lastKbPath(bundlePath: string): string {
	return join(dirname(bundlePath), 'kb.json');
}

interface ReadArticle {
	parsed: ParsedArticle & { title: string };
	file: string;
	url: string;
	/** Changes with the article's source or URL. */
	hash: string;
	sections: SectionToChunk[];
}

interface IndexedArticle extends ReadArticle {
	chunks: ArticleChunk[];
}

/**
 * Reads every selected article, checks its URL and anchors against the built pages, chunks and embeds it,
 * and only then publishes: Chroma (when configured), the private bundle and kb.json. Any problem found before
 * publishing either stops the build with all problems listed (`onError: 'fail'`) or skips that article with
 * a warning (`'warn'`); either way nothing half-made is written.
 */
export async function buildKnowledgeBase(options: ConciergeOptions, context: BuildContext): Promise<BuildReport> {
	const started = performance.now();
	const { logger, root } = context;
	const problems: string[] = [];
	const report = (problem: string) => {
		if (options.onError === 'warn') logger.warn(problem);
		problems.push(problem);
	};

	const files = await findArticles({ srcDir: context.srcDir, include: options.include, exclude: options.exclude });
	const cache = await openEmbeddingCache({ dir: resolve(root, options.cacheDir), modelKey: await modelKey(options, root) });
	// Loaded on first use: a rebuild whose articles are all chunked and embedded in the cache never needs the model.
	let loading: Promise<Embedder> | undefined;
	const embedder = () => (loading ??= loadEmbedder(options, root, logger));
	try {
		const found: ReadArticle[] = [];
		let skipped = 0;
		for (const article of await readArticles(files, options, context, cache, report)) {
			if (article === 'skip') skipped++;
			else if (article) found.push(article);
		}
		// Two articles at one URL are both left out: indexing either would link answers to the wrong text.
		const byUrl = Map.groupBy(found, (article) => article.url);
		const articles: IndexedArticle[] = [];
		for (const [url, group] of byUrl) {
			if (group.length > 1) {
				report(`${group.map((article) => article.file).join(' and ')} have the same URL ${url}; give all but one another path or slug`);
				continue;
			}
			const article = group[0]!;
			const toChunk = { url: article.url, title: article.parsed.title, sections: article.sections };
			const key = chunkKey(toChunk, options);
			let chunks = cache.chunks.get(key);
			if (!chunks) {
				const { countTokens } = await embedder();
				chunks = chunkArticle(toChunk, { chunkSize: options.chunkSize, chunkOverlap: options.chunkOverlap, countTokens });
				cache.chunks.set(key, chunks);
			}
			if (chunks.length === 0) {
				report(`${article.file}: has no text to index`);
				continue;
			}
			articles.push({ ...article, chunks });
		}
		if (problems.length > 0 && options.onError === 'fail') {
			throw new AstroError(
				`astro-concierge found ${problems.length} problem${problems.length > 1 ? 's' : ''}; nothing was published:\n- ${problems.join('\n- ')}`,
				"Fix the articles named above, or set the integration's onError option to 'warn' to skip them.",
			);
		}
		logger.info(`${articles.length} articles to index (${skipped} drafts or opted out) from ${files.length} files`);

		const chunks = articles.flatMap((article) => article.chunks);
		const { vectors, dimension, report: embedding } = await embedChunks(
			chunks.map((chunk) => chunk.embedText),
			embedder,
			cache,
			logger,
		);
		// The island gets a Hub model's files from the download loading it makes, so they are fetched even when nothing is embedded.
		const source = modelSource(options, root);
		if (!options.modelHost && source.folder !== source.model && !requiredFiles(options.dtype).every((file) => existsSync(join(source.folder, file)))) {
			await embedder();
		}
		const articleByUrl = new Map(articles.map((article) => [article.url, article]));
		const bundleChunks: BundleChunk[] = chunks.map((chunk, i) => ({
			id: chunk.id,
			text: chunk.text,
			metadata: {
				url: chunk.url,
				anchor: chunk.anchor,
				title: chunk.title,
				heading: chunk.heading,
				lang: articleByUrl.get(chunk.url)!.parsed.lang ?? '',
				articleHash: articleByUrl.get(chunk.url)!.hash,
			},
			embedding: Array.from(vectors[i]!),
		}));
		const header: BundleHeader = {
			format: BUNDLE_FORMAT,
			version: BUNDLE_VERSION,
			model: source.name,
			dtype: options.dtype,
			dimension,
			pooling: 'mean',
			normalize: true,
			passagePrefix: E5_PASSAGE_PREFIX,
			queryPrefix: E5_QUERY_PREFIX,
			topK: options.topK,
			maxDistance: options.maxDistance,
			contentVersion: contentVersion(options, bundleChunks),
			chunks: bundleChunks.length,
		};

		const bundlePath = resolve(root, options.bundle);
		const kb = encodeKb({
			model: header.model,
			dtype: header.dtype,
			dimension: header.dimension,
			pooling: 'mean',
			normalize: true,
			queryPrefix: E5_QUERY_PREFIX,
			topK: options.topK,
			maxDistance: options.maxDistance,
			contentVersion: header.contentVersion,
			chunks: chunks.map((chunk, i) => ({
				id: chunk.id,
				url: chunk.url,
				anchor: chunk.anchor,
				title: chunk.title,
				heading: chunk.heading,
				vector: vectors[i]!,
			})),
		});
		const kbPath = join(context.publicDir, KB_PATH);
		// Every file is written aside first, so a full disk fails before Chroma or any file has changed;
		// then Chroma (the one that can be unreachable), then the renames.
		const staged: StagedFile[] = [];
		try {
			staged.push(await stageFile(bundlePath, formatBundle(header, bundleChunks)));
			staged.push(await stageFile(kbPath, kb));
			staged.push(await stageFile(lastKbPath(bundlePath), kb));
			if (options.chroma) await updateChroma(options, root, header, bundleChunks, logger);
		} catch (error) {
			for (const file of staged) await file.discard();
			throw error;
		}
		for (const file of staged) await file.commit();
		await cache.save();

		logger.info(
			`${chunks.length} chunks from ${articles.length} articles (${embedding.embedded} embedded, ${embedding.reused} reused) in ${seconds(performance.now() - started)}`,
		);
		logger.info(`wrote ${relative(root, kbPath)} (${kb.length} bytes) and ${relative(root, bundlePath)}`);
		return {
			articles: articles.length,
			chunks: chunks.length,
			embedded: embedding.embedded,
			reused: embedding.reused,
			contentVersion: header.contentVersion,
			kbPath,
			bundlePath,
		};
	} finally {
		// A model that failed to load has nothing to release, and its error is already the build's.
		await loading?.then((model) => model.dispose(), () => undefined);
	}
}

// Enough reads in flight to hide the file system's latency, few enough to stay far below any open-files limit.
const READS_IN_FLIGHT = 16;

/** Reads articles several at a time; results and problems come in the order of `files`. */
async function readArticles(
	files: readonly string[],
	options: ConciergeOptions,
	context: BuildContext,
	cache: EmbeddingCache,
	report: (problem: string) => void,
): Promise<Array<ReadArticle | 'skip' | undefined>> {
	const results: Array<ReadArticle | 'skip' | undefined> = [];
	const reports: string[][] = [];
	for (let start = 0; start < files.length; start += READS_IN_FLIGHT) {
		const batch = files.slice(start, start + READS_IN_FLIGHT);
		const settled = await Promise.allSettled(
			batch.map((absolute, i) => readArticle(absolute, relative(context.root, absolute), options, context, cache, (problem) => (reports[start + i] ??= []).push(problem))),
		);
		for (const [i, outcome] of settled.entries()) {
			for (const problem of reports[start + i] ?? []) report(problem);
			if (outcome.status === 'rejected') throw outcome.reason;
			results.push(outcome.value);
		}
	}
	return results;
}

async function readArticle(
	absolute: string,
	file: string,
	options: ConciergeOptions,
	context: BuildContext,
	cache: EmbeddingCache,
	report: (problem: string) => void,
): Promise<ReadArticle | 'skip' | undefined> {
	const source = await readFile(absolute);
	const sourceKey = cacheKey('article', file, source);
	let parsed = cache.articles.get(sourceKey);
	if (!parsed) {
		try {
			parsed = parseArticle(source, file);
		} catch (error) {
			if (error instanceof ArticleError) return void report(error.message);
			throw error;
		}
		// Frontmatter reaches the url option as it is: one that JSON would change (a YAML 1.1 date, .nan) is parsed again each build.
		if (isDeepStrictEqual(JSON.parse(JSON.stringify(parsed.frontmatter)), parsed.frontmatter)) cache.articles.set(sourceKey, parsed);
	}
	// Drafts and opted-out articles stop here, before anything of theirs reaches an output.
	if (parsed.draft || !parsed.index) return 'skip';
	const title = parsed.title;
	if (!title) return void report(`${file}: has no title (set "title" in its frontmatter or start it with a # heading)`);

	const origin = articleOrigin(absolute, parsed.frontmatter, context);
	if (!origin) {
		return void report(`${file}: is neither a page under src/pages nor an entry of a collection under src/content, so its URL is unknown`);
	}
	let url: string | undefined;
	if (origin.kind === 'page') url = formatPageUrl(origin.pathname, origin.isIndex, context.urlStyle);
	else {
		const path = (options.url ?? defaultEntryUrl)(origin.entry);
		if (path === undefined) return 'skip';
		// Written like a routed page's URL, so build.format and trailingSlash apply to entries too.
		url = formatPageUrl(path, false, context.urlStyle);
	}

	const page = builtPage(url, context);
	if (!page) return void report(`${file}: its page ${url} was not built, so it is not indexed (set the url option for collection entries)`);
	const html = await readFile(page);
	const pageKey = cacheKey('page', html);
	let headings = cache.pages.get(pageKey);
	if (!headings) {
		headings = readPageHeadings(html.toString('utf8')).headings;
		cache.pages.set(pageKey, headings);
	}
	const ids = matchHeadingIds(parsed.headings.map((heading) => heading.text), { headings });
	const indexOfLine = new Map(parsed.headings.map((heading, i) => [heading.line, i]));
	const sections = parsed.sections.map((section) => {
		// A section whose own heading was not rendered with an id links to its nearest ancestor that was.
		let anchor = '';
		for (const heading of [...section.path].reverse()) {
			anchor = ids[indexOfLine.get(heading.line) ?? -1] ?? '';
			if (anchor) break;
		}
		return { path: section.path.map((heading) => heading.text), anchor, text: section.text };
	});
	const hash = createHash('sha256').update(source).update(url).digest('hex').slice(0, 16);
	return { parsed: { ...parsed, title }, file, url, hash, sections };
}

/** The built HTML file a site URL is served from, if the build wrote one. */
function builtPage(url: string, context: BuildContext): string | undefined {
	const base = context.urlStyle.base.replace(/\/+$/, '');
	let path = decodeURI(url);
	if (base && path.startsWith(base)) path = path.slice(base.length);
	const inside = path.replace(/^\/+/, '');
	const candidates = inside.endsWith('.html')
		? [inside]
		: [join(inside, 'index.html'), `${inside.replace(/\/+$/, '')}.html`];
	for (const candidate of candidates) {
		const file = join(context.publicDir, candidate);
		if (existsSync(file)) return file;
	}
	return undefined;
}

/** Runs `work` against the configured Chroma: a server at a URL, or one started on a data folder for the duration. */
async function withChroma<T>(
	chroma: { url: string } | { path: string },
	root: string,
	work: (client: ChromaClient) => Promise<T>,
): Promise<T> {
	if ('url' in chroma) return work(await connectChroma(chroma.url));
	const server = await startChromaServer({ path: resolve(root, chroma.path) });
	try {
		return await work(await connectChroma(server.url));
	} finally {
		await server.close();
	}
}

async function updateChroma(
	options: ConciergeOptions,
	root: string,
	header: BundleHeader,
	chunks: BundleChunk[],
	logger: AstroIntegrationLogger,
): Promise<void> {
	try {
		const synced = await withChroma(options.chroma as { url: string } | { path: string }, root, (client) =>
			syncChroma({ client, collection: options.collection, header, chunks }),
		);
		logger.info(`Chroma collection ${options.collection}: ${synced.upserted} upserted, ${synced.deleted} deleted, ${synced.unchanged} unchanged`);
	} catch (error) {
		const message = `could not update Chroma: ${(error as Error).message}`;
		if (options.onError === 'fail') {
			throw new AstroError(
				`astro-concierge ${message}; nothing was published`,
				'Start Chroma, fix the chroma option, or remove it to leave Chroma to the sidecar.',
			);
		}
		logger.warn(`${message}; the bundle and kb.json are written without it`);
	}
}

async function loadEmbedder(options: ConciergeOptions, root: string, logger: AstroIntegrationLogger) {
	const { model, cacheDir } = modelSource(options, root);
	// The first build downloads the model (about 118 MB for e5 small in q8): one line per file per 10%.
	const reported = new Map<string, number>();
	const onDownload = ({ file, loaded, total }: DownloadProgress): void => {
		if (!(total > 0)) return;
		const tenth = Math.floor((10 * loaded) / total);
		if (reported.get(file) === tenth) return;
		reported.set(file, tenth);
		logger.info(`downloading ${model} ${file}: ${(loaded / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB into ${cacheDir}`);
	};
	return createEmbedder({ model, dtype: options.dtype, cacheDir, onDownload });
}

/** What identifies the weights: a Hub id as is; a local folder by its name and its files' contents. */
async function modelKey(options: ConciergeOptions, root: string): Promise<string> {
	if (!isLocalModel(options.model, root)) return `${options.model}|${options.dtype}|mean|normalize`;
	const folder = resolve(root, options.model);
	const hash = createHash('sha256');
	for (const file of ['config.json', 'tokenizer.json', `onnx/${options.dtype === 'fp32' ? 'model' : 'model_quantized'}.onnx`]) {
		const path = join(folder, file);
		if ((await stat(path).catch(() => undefined))?.isFile()) hash.update(await readFile(path));
	}
	return `${basename(folder)}|${hash.digest('hex')}|${options.dtype}|mean|normalize`;
}

/** A cache key naming every input of one `kind` of cached step; the model's tokenizer is in the cache's own key. */
function cacheKey(kind: string, ...inputs: Array<string | Uint8Array>): string {
	// The package version stands for the code that made a cached value, so an upgrade never reuses an older one's.
	const hash = createHash('sha256').update(`${PACKAGE_VERSION}\0${kind}`);
	for (const input of inputs) hash.update(`\0${Buffer.byteLength(input)}\0`).update(input);
	return hash.digest('base64url');
}

function chunkKey(article: { url: string; title: string; sections: readonly SectionToChunk[] }, options: ConciergeOptions): string {
	return cacheKey('chunks', JSON.stringify([options.chunkSize, options.chunkOverlap, article.url, article.title, article.sections]));
}

function contentVersion(options: ConciergeOptions, chunks: readonly BundleChunk[]): string {
	const hash = createHash('sha256').update(`${options.model}|${options.dtype}|${options.topK}|${options.maxDistance}\n`);
	for (const chunk of chunks) {
		hash.update(JSON.stringify([chunk.id, chunk.text, chunk.metadata]));
		hash.update(new Uint8Array(Float32Array.from(chunk.embedding).buffer));
	}
	return hash.digest('hex').slice(0, 16);
}

function seconds(ms: number): string {
	return `${(ms / 1000).toFixed(1)} s`;
}
