// A generated corpus of blog articles, recombined from the test passages' sentences: kb.json's size test and
// the build benchmark index the same kind of site.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PASSAGES } from '../models/passages.ts';
import { seededRandom } from './seeded-random.ts';

const sentences = PASSAGES.flatMap((item) =>
	item.passage.split(item.lang === 'ja' ? /(?<=。)/ : /(?<=\.)\s+/).map((text) => ({ lang: item.lang, text: text.trim() })),
).filter((sentence) => sentence.text);

/** Writes `articleCount` articles (`note-<n>.md`, alternately English and Japanese) of four sections each into `dir`. */
export async function writeArticles(dir: string, articleCount: number): Promise<void> {
	const next = seededRandom(7);
	const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
	await mkdir(dir, { recursive: true });
	for (let n = 0; n < articleCount; n++) {
		const lang = n % 2 === 0 ? 'en' : 'ja';
		const pool = sentences.filter((sentence) => sentence.lang === lang);
		const body: string[] = [];
		for (let section = 0; section < 4; section++) {
			body.push(`## ${lang === 'en' ? 'Part' : '第'}${section + 1}${lang === 'en' ? '' : '部'}`);
			for (let paragraph = 0; paragraph < 2; paragraph++) {
				const count = 2 + Math.floor(next() * 3);
				body.push(Array.from({ length: count }, () => pick(pool).text).join(lang === 'en' ? ' ' : ''));
			}
		}
		const title = `${pick(PASSAGES.filter((item) => item.lang === lang)).query} (${n})`;
		const frontmatter = `---\nlayout: ../../layouts/Article.astro\ntitle: ${JSON.stringify(title)}\nlang: ${lang}\n---\n\n`;
		await writeFile(join(dir, `note-${n}.md`), `${frontmatter}${body.join('\n\n')}\n`);
	}
}

