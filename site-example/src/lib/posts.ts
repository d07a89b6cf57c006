import { getCollection, type CollectionEntry } from 'astro:content';

export type Post = CollectionEntry<'blog'>;

/** Published articles (drafts left out), newest first. */
export async function getPublishedPosts(): Promise<Post[]> {
	const posts: Post[] = await getCollection('blog', ({ data }: Post) => !data.draft);
	return posts.sort((a, b) => b.data.date.valueOf() - a.data.date.valueOf());
}

const dateFormats = {
	en: new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' }),
	ja: new Intl.DateTimeFormat('ja-JP', { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' }),
};

/** "14 March 2026" or "2026年3月14日", as the article's language writes dates. */
export function formatDate(date: Date, lang: 'en' | 'ja'): string {
	return dateFormats[lang].format(date);
}

/** The date as `<time datetime>` wants it. */
export function isoDate(date: Date): string {
	return date.toISOString().slice(0, 10);
}
