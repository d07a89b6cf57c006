import { E5_PASSAGE_PREFIX } from './runtime/e5.ts';
import { splitText, truncateText, type CountTokens } from './split-text.ts';

/** One section of an article, ready to chunk: its heading path and the id Astro rendered for it. */
export interface SectionToChunk {
	/** Heading texts from the top of the article down to this section's own heading. */
	path: string[];
	/** The section's `id` in the built page, or '' for text before the first heading. */
	anchor: string;
	text: string;
}

/** A piece of an article as it is embedded, stored in the bundle and listed in kb.json. */
export interface ArticleChunk {
	/** `<url>#<n>`: stable across rebuilds while the article is unchanged. */
	id: string;
	url: string;
	anchor: string;
	title: string;
	/** Heading path below the title, joined with ' › '. */
	heading: string;
	text: string;
	/** What the model reads after the `passage: ` prefix: title and heading path, then the text. */
	embedText: string;
}

/** Options of {@link chunkArticle}. */
export interface ChunkArticleOptions {
	/** Largest embedded string in tokens, prefix and special tokens included. */
	chunkSize: number;
	chunkOverlap: number;
	/** The embedding model's token count of a string, special tokens included. */
	countTokens: CountTokens;
}

const pathSeparator = ' › ';

/**
 * Splits an article's sections into chunks whose whole embedded string (prefix, title, heading path, text)
 * stays within `chunkSize` of the embedding model's tokens, so the model never truncates one silently.
 */
export function chunkArticle(
	article: { url: string; title: string; sections: readonly SectionToChunk[] },
	options: ChunkArticleOptions,
): ArticleChunk[] {
	const { chunkSize, countTokens } = options;
	const chunks: ArticleChunk[] = [];
	for (const section of article.sections) {
		if (section.text.trim() === '') continue;
		// A first heading that repeats the title adds nothing to the context.
		const path = section.path[0] === article.title ? section.path.slice(1) : section.path;
		const heading = path.join(pathSeparator);
		let header = [article.title, ...path].join(pathSeparator);
		// The header may take at most half the budget, so every chunk keeps room for its own text.
		if (countTokens(`${E5_PASSAGE_PREFIX}${header}\n`) > chunkSize / 2) {
			header = truncateText(header, { maxTokens: Math.floor(chunkSize / 2), countTokens });
		}
		const lead = `${header}\n`;
		// Both counts include the model's special tokens once; the text alone must not pay for them twice.
		const overhead = countTokens(E5_PASSAGE_PREFIX + lead) - countTokens('');
		for (const text of splitToFit(section.text, lead, chunkSize - overhead, options)) {
			chunks.push({
				id: `${article.url}#${chunks.length}`,
				url: article.url,
				anchor: section.anchor,
				title: article.title,
				heading,
				text,
				embedText: lead + text,
			});
		}
	}
	return chunks;
}

// Tokenizers are not additive at the seam between header and text, so each piece is checked whole
// and split again, with a little less room, in the rare case it overflows by a token or two.
function splitToFit(text: string, lead: string, budget: number, options: ChunkArticleOptions): string[] {
	const { chunkSize, chunkOverlap, countTokens } = options;
	const fits = (piece: string) => countTokens(E5_PASSAGE_PREFIX + lead + piece) <= chunkSize;
	const pieces: string[] = [];
	for (const piece of splitText(text, { maxTokens: budget, overlapTokens: Math.min(chunkOverlap, budget - 1), countTokens })) {
		if (fits(piece)) {
			pieces.push(piece);
			continue;
		}
		let room = budget - 2;
		let parts = splitText(piece, { maxTokens: room, countTokens });
		while (!parts.every(fits) && room > 8) {
			room -= 4;
			parts = splitText(piece, { maxTokens: room, countTokens });
		}
		pieces.push(...parts);
	}
	return pieces;
}
