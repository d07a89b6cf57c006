// Deterministic vectors and blog-shaped metadata for kb.json's tests and benchmarks: one generator, so the
// figures the benchmarks publish are those of the data the tests check.
import type { KbInput, KbInputChunk } from '../../integration/encode-kb.ts';
import type { KbSettings } from '../../integration/runtime/kb.ts';

/** multilingual-e5-small's width, the size that matters. */
export const DIMENSION = 384;

/** kb.json settings for generated knowledge bases. */
export const SETTINGS: KbSettings = {
	model: 'Xenova/multilingual-e5-small',
	dtype: 'q8',
	dimension: DIMENSION,
	pooling: 'mean',
	normalize: true,
	queryPrefix: 'query: ',
	topK: 8,
	maxDistance: 0.35,
	contentVersion: '9f86d081884c7d65',
};

export type Random = () => number;

/** Standard normal samples by Box–Muller, both halves of each pair used. */
export function gaussians(random: Random, count: number): Float64Array {
	const values = new Float64Array(count);
	for (let i = 0; i < count; i += 2) {
		const radius = Math.sqrt(-2 * Math.log(1 - random()));
		const angle = 2 * Math.PI * random();
		values[i] = radius * Math.cos(angle);
		if (i + 1 < count) values[i + 1] = radius * Math.sin(angle);
	}
	return values;
}

export function normalised(values: Float64Array): Float32Array {
	let squares = 0;
	for (let k = 0; k < values.length; k++) squares += (values[k] as number) * (values[k] as number);
	const inverse = 1 / Math.sqrt(squares);
	const unit = new Float32Array(values.length);
	for (let k = 0; k < values.length; k++) unit[k] = (values[k] as number) * inverse;
	return unit;
}

export function randomUnit(random: Random, dimension = DIMENSION): Float32Array {
	return normalised(gaussians(random, dimension));
}

/**
 * Samples vectors that crowd together the way e5's do: a direction every text shares, one of a few topic
 * centres, and per-text detail. Weights 0.75 / 0.10 / 0.15 (as shares of squared length) give a mean
 * pairwise cosine near 0.77, mid-way in the 0.7–0.85 that multilingual-e5 typically shows.
 */
export function e5LikeSource(random: Random, dimension = DIMENSION): () => Float32Array {
	const shared = randomUnit(random, dimension);
	const topics = Array.from({ length: 8 }, () => randomUnit(random, dimension));
	const [wShared, wTopic, wDetail] = [Math.sqrt(0.75), Math.sqrt(0.1), Math.sqrt(0.15)];
	return () => {
		const topic = topics[Math.floor(random() * topics.length)] as Float32Array;
		const detail = randomUnit(random, dimension);
		const mixed = new Float64Array(dimension);
		for (let k = 0; k < dimension; k++) {
			mixed[k] = wShared * (shared[k] as number) + wTopic * (topic[k] as number) + wDetail * (detail[k] as number);
		}
		return normalised(mixed);
	};
}

const WORDS = (
	'astro build static site deploy node server cache image layout content collection markdown island ' +
	'hydration route page blog post search vector embedding model browser worker stream token query ' +
	'answer docker volume nginx proxy config theme font colour dark mode testing ci release guide'
).split(' ');

function words(random: Random, count: number): string[] {
	return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)] as string);
}

function capitalised(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}

function slug(text: string): string {
	return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

/** A title of 20–60 characters. */
function title(random: Random): string {
	const target = 20 + Math.floor(random() * 41);
	let text = capitalised(words(random, 1)[0] as string);
	while (text.length < target) {
		const next = `${text} ${words(random, 1)[0]}`;
		if (next.length > 60) break;
		text = next;
	}
	return text;
}

/** Blog-shaped metadata for each vector: articles of 1–10 sections, ids `<url>#<n>`, heading paths. */
export function withMetadata(vectors: Float32Array[], random: Random, settings: KbSettings = SETTINGS): KbInput {
	const chunks: KbInputChunk[] = [];
	const urls = new Set<string>();
	while (chunks.length < vectors.length) {
		let url: string;
		do url = `/blog/${slug(words(random, 2 + Math.floor(random() * 4)).join(' '))}/`;
		while (urls.has(url));
		urls.add(url);
		const pageTitle = title(random);
		const sections = 1 + Math.floor(random() * 10);
		let section = '';
		for (let n = 0; n < sections && chunks.length < vectors.length; n++) {
			let heading = '';
			if (n > 0) {
				const name = capitalised(words(random, 2 + Math.floor(random() * 4)).join(' '));
				if (section === '' || random() < 0.6) section = name;
				heading = section === name ? name : `${section} › ${name}`;
			}
			const anchor = heading === '' ? '' : slug(heading.split(' › ').at(-1) as string);
			chunks.push({ id: `${url}#${n}`, url, anchor, title: pageTitle, heading, vector: vectors[chunks.length] as Float32Array });
		}
	}
	return { ...settings, chunks };
}

/** The same knowledge base as the seeds wrote it: full metadata per chunk, vectors as 6-decimal JSON floats. */
export function seedFormat(input: KbInput): string {
	const { chunks, ...settings } = input;
	return JSON.stringify({
		...settings,
		chunks: chunks.map(({ id, url, anchor, title, heading, vector }) => ({
			id,
			url,
			anchor,
			title,
			heading,
			vector: Array.from(vector, (value) => Math.round(value * 1e6) / 1e6),
		})),
	});
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
	let dot = 0;
	let aa = 0;
	let bb = 0;
	for (let k = 0; k < a.length; k++) {
		dot += (a[k] as number) * (b[k] as number);
		aa += (a[k] as number) ** 2;
		bb += (b[k] as number) ** 2;
	}
	return dot / Math.sqrt(aa * bb);
}

/** Mean cosine over every pair: how tightly the vectors crowd together. */
export function meanPairwiseCosine(vectors: Float32Array[]): number {
	let sum = 0;
	let pairs = 0;
	for (let a = 0; a < vectors.length; a++) {
		for (let b = a + 1; b < vectors.length; b++) {
			sum += cosine(vectors[a] as Float32Array, vectors[b] as Float32Array);
			pairs++;
		}
	}
	return sum / pairs;
}
