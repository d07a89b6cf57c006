import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArticleError, parseArticle, type ParsedArticle } from '../../integration/parse-article.ts';

/** Joins lines so fixtures read like the files they stand for. */
const md = (...lines: string[]) => lines.join('\n') + '\n';

const allText = (article: ParsedArticle) => article.sections.map((section) => section.text).join('\n\n');

/** Asserts that parsing throws an ArticleError for `file`, with `line`, whose message matches `what`. */
function assertArticleError(run: () => unknown, file: string, line: number | undefined, what: RegExp) {
	assert.throws(run, (error: unknown) => {
		assert.ok(error instanceof ArticleError, `expected an ArticleError, got ${String(error)}`);
		assert.equal(error.file, file);
		assert.equal(error.line, line);
		assert.ok(error.message.startsWith(line === undefined ? `${file}: ` : `${file}:${line}: `), error.message);
		assert.match(error.message, what);
		return true;
	});
}

const english = md(
	'---',
	'title: Baking bread at home',
	'description: A beginner guide.',
	'lang: en',
	'---',
	'',
	'Bread needs only four ingredients.',
	'',
	'## Ingredients',
	'',
	'You need flour, water, salt and yeast.',
	'',
	'### Flour',
	'',
	'Use **bread flour** with `12%` protein, see [the chart](https://example.com/chart).',
	'',
	'### Water',
	'',
	'Lukewarm, not hot.',
	'',
	'## Method',
	'',
	'#### Kneading',
	'',
	'Knead for ten minutes.',
	'',
	'### Baking',
	'',
	'Bake at 230 °C.',
);

describe('parseArticle on an English article', () => {
	const article = parseArticle(english, 'blog/bread.md');

	test('reads the frontmatter fields it knows and keeps the whole frontmatter', () => {
		assert.equal(article.file, 'blog/bread.md');
		assert.equal(article.title, 'Baking bread at home');
		assert.equal(article.description, 'A beginner guide.');
		assert.equal(article.lang, 'en');
		assert.equal(article.draft, false);
		assert.equal(article.index, true);
		assert.equal(article.launcher, true);
		assert.deepEqual(article.frontmatter, { title: 'Baking bread at home', description: 'A beginner guide.', lang: 'en' });
	});

	test('lists every heading with its depth, text and line', () => {
		assert.deepEqual(article.headings, [
			{ depth: 2, text: 'Ingredients', line: 9 },
			{ depth: 3, text: 'Flour', line: 13 },
			{ depth: 3, text: 'Water', line: 17 },
			{ depth: 2, text: 'Method', line: 21 },
			{ depth: 4, text: 'Kneading', line: 23 },
			{ depth: 3, text: 'Baking', line: 27 },
		]);
	});

	test('gives the text before the first heading its own section with an empty path', () => {
		assert.deepEqual(article.sections[0], { path: [], headingIndex: -1, text: 'Bread needs only four ingredients.', line: 7 });
	});

	test('nests each section under the chain of headings above it, a new heading closing deeper ones', () => {
		const paths = article.sections.map((section) => section.path.map((heading) => heading.text).join(' > '));
		assert.deepEqual(paths, ['', 'Ingredients', 'Ingredients > Flour', 'Ingredients > Water', 'Method', 'Method > Kneading', 'Method > Baking']);
		assert.deepEqual(
			article.sections.map((section) => [section.headingIndex, section.line]),
			[[-1, 7], [0, 9], [1, 13], [2, 17], [3, 21], [4, 23], [5, 27]],
		);
	});

	test('flattens emphasis, inline code and links to their text, leaving out URLs', () => {
		assert.equal(article.sections[2]?.text, 'Use bread flour with 12% protein, see the chart.');
	});

	test('lists a heading directly followed by a subheading as a section with empty text', () => {
		assert.equal(article.sections[4]?.text, '');
	});
});

describe('parseArticle on a Japanese article', () => {
	const article = parseArticle(
		md(
			'---',
			'title: 日本語の記事',
			'lang: ja',
			'---',
			'',
			'# 日本語の記事',
			'',
			'これは、テストです。',
			'',
			'## 見出し、その一。',
			'',
			'本文の段落です。改行を含みます、',
			'二行目です。',
			'',
			'### 小見出し',
			'',
			'- 項目一',
			'- 項目二',
		),
		'blog/日本語.md',
	);

	test('keeps Japanese punctuation in headings and text', () => {
		assert.deepEqual(
			article.headings.map((heading) => heading.text),
			['日本語の記事', '見出し、その一。', '小見出し'],
		);
		assert.equal(article.sections[1]?.text, '本文の段落です。改行を含みます、\n二行目です。');
		assert.equal(article.sections[2]?.text, '項目一\n項目二');
	});

	test('gives a top h1 equal to the title a section of its own', () => {
		assert.equal(article.title, '日本語の記事');
		assert.deepEqual(article.sections[0], {
			path: [{ depth: 1, text: '日本語の記事', line: 6 }],
			headingIndex: 0,
			text: 'これは、テストです。',
			line: 6,
		});
		assert.deepEqual(
			article.sections[2]?.path.map((heading) => heading.text),
			['日本語の記事', '見出し、その一。', '小見出し'],
		);
	});
});

describe('parseArticle section text', () => {
	const article = parseArticle(
		md(
			'# Reference',
			'',
			'```ts',
			"const answer = 42;",
			'```',
			'',
			'| Name | Value |',
			'| ---- | ----- |',
			'| `a`  | one   |',
			'| b    | two   |',
			'',
			'1. first',
			'2. second',
			'   - nested *item*',
			'     - deeper',
			'3. third',
			'',
			'> A quoted line.',
			'',
			'---',
			'',
			'![a picture](pic.png)',
			'',
			'See <span class="x">inline html</span> here.',
			'',
			'<div class="note">',
			'Hidden markup text',
			'</div>',
			'',
			'<!-- a comment -->',
			'',
			'## Custom id {#custom-id}',
		),
		'ref.md',
	);
	const text = article.sections[0]?.text ?? '';

	test('keeps code but not its fences or language tag', () => {
		assert.match(text, /^const answer = 42;/);
		assert.doesNotMatch(text, /```|\bts\b/);
	});

	test('puts each table row on a line with cells joined by a bar', () => {
		assert.match(text, /^Name \| Value\na \| one\nb \| two$/m);
	});

	test('puts each list item on its own line, nested items too', () => {
		assert.match(text, /^first\nsecond\nnested item\ndeeper\nthird$/m);
	});

	test('keeps blockquotes and the text between inline HTML tags', () => {
		assert.match(text, /^A quoted line\.$/m);
		assert.match(text, /^See inline html here\.$/m);
	});

	test('leaves out HTML blocks, comments, thematic breaks and images', () => {
		assert.doesNotMatch(allText(article), /<|>|Hidden markup|comment|---|picture|pic\.png/);
	});

	test('separates blocks with a blank line', () => {
		assert.equal(
			text,
			[
				'const answer = 42;',
				'Name | Value\na | one\nb | two',
				'first\nsecond\nnested item\ndeeper\nthird',
				'A quoted line.',
				'See inline html here.',
			].join('\n\n'),
		);
	});

	test('keeps a {#custom-id} as literal heading text, since Astro has no such syntax', () => {
		assert.equal(article.headings[1]?.text, 'Custom id {#custom-id}');
	});
});

describe('parseArticle on MDX', () => {
	const source = md(
		'---',
		'title: Components',
		'---',
		"import Callout from '../components/Callout.astro';",
		"export const year = 2024;",
		'',
		'Written in {year}.',
		'',
		'## Notes',
		'',
		'<Callout type="warning" title="Attribute text">',
		'Mind the **oven**.',
		'</Callout>',
		'',
		'Inline <Badge color="red">new</Badge> feature {1 + 1}.',
		'',
		'{/* a comment */}',
		'',
		'```js',
		"import kept from 'code';",
		'```',
	);
	const article = parseArticle(source, 'posts/components.mdx');
	const text = allText(article);

	test('parses imports, exports and expressions and leaves them out of the text', () => {
		assert.equal(article.title, 'Components');
		assert.doesNotMatch(text, /Callout\.astro|export|year|1 \+ 1|a comment/);
		assert.equal(article.sections[0]?.text, 'Written in .');
		assert.equal(article.sections[0]?.line, 7);
	});

	test('keeps the text of JSX children but not the tags or attributes', () => {
		assert.equal(article.sections[1]?.text, "Mind the oven.\n\nInline new feature .\n\nimport kept from 'code';");
		assert.doesNotMatch(text, /<|warning|Attribute text|red/);
	});

	test('looks through block JSX wrappers for headings', () => {
		const wrapped = parseArticle(md('<Layout>', '', '## Inside a wrapper', '', 'Wrapped text.', '', '</Layout>'), 'wrapped.mdx');
		assert.deepEqual(wrapped.headings, [{ depth: 2, text: 'Inside a wrapper', line: 3 }]);
		assert.equal(wrapped.sections[0]?.text, 'Wrapped text.');
	});

	test('falls back to plain markdown without ESM when remark-mdx rejects the MDX', () => {
		const broken = md(
			"import Chart from './Chart.astro';",
			'',
			'## Results {#results}',
			'',
			'<!-- HTML comments are a syntax error in MDX -->',
			'',
			'The numbers went up.',
			'',
			'```js',
			"import kept from 'code';",
			'```',
		);
		let article: ParsedArticle | undefined;
		assert.doesNotThrow(() => {
			article = parseArticle(broken, 'posts/broken.mdx');
		});
		assert.deepEqual(article?.headings, [{ depth: 2, text: 'Results {#results}', line: 3 }]);
		assert.equal(article?.sections[0]?.text, "The numbers went up.\n\nimport kept from 'code';");
		assert.doesNotMatch(allText(article!), /Chart|HTML comments/);
	});

	test('reads an .md file as markdown even when it looks like MDX', () => {
		const article = parseArticle(md('Text with {braces} and <!-- a comment -->.'), 'plain.md');
		assert.equal(article.sections[0]?.text, 'Text with {braces} and .');
	});
});

describe('parseArticle title', () => {
	test('falls back to the first h1 when the frontmatter has no title', () => {
		const article = parseArticle(md('---', 'tags: [a]', '---', '## Before', '', '# The *real* title', '', '# Second h1'), 'a.md');
		assert.equal(article.title, 'The real title');
	});

	test('is undefined with neither a frontmatter title nor an h1', () => {
		assert.equal(parseArticle(md('## Only h2', '', 'Text.'), 'a.md').title, undefined);
	});

	test('ignores a frontmatter title that is not a string', () => {
		assert.equal(parseArticle(md('---', 'title: 2024', '---', '# Heading title'), 'a.md').title, 'Heading title');
	});
});

describe('parseArticle input', () => {
	test('reads UTF-8 bytes the same as a string and strips a BOM from either', () => {
		const text = md('---', 'title: Café', '---', '', 'Crème brûlée.');
		const fromString = parseArticle(text, 'a.md');
		const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]);
		assert.deepEqual(parseArticle(bom, 'a.md'), fromString);
		assert.deepEqual(parseArticle(`\uFEFF${text}`, 'a.md'), fromString);
		assert.equal(fromString.title, 'Café');
	});
});

describe('parseArticle frontmatter settings', () => {
	const read = (...frontmatter: string[]) => parseArticle(md('---', ...frontmatter, '---', '', 'Body.'), 'post.md');

	test('marks `draft: true` as a draft and anything else as not', () => {
		assert.equal(read('draft: true').draft, true);
		assert.equal(read('draft: false').draft, false);
		assert.equal(read('title: x').draft, false);
	});

	test('indexes and shows the launcher without a `concierge` key or with `concierge: true`', () => {
		assert.deepEqual([read('title: x').index, read('title: x').launcher], [true, true]);
		assert.deepEqual([read('concierge: true').index, read('concierge: true').launcher], [true, true]);
	});

	test('turns both off with `concierge: false`', () => {
		const article = read('concierge: false');
		assert.deepEqual([article.index, article.launcher], [false, false]);
	});

	test('turns off only what the `concierge` object says', () => {
		const noIndex = read('concierge:', '  index: false');
		assert.deepEqual([noIndex.index, noIndex.launcher], [false, true]);
		const noLauncher = read('concierge: { launcher: false }');
		assert.deepEqual([noLauncher.index, noLauncher.launcher], [true, false]);
		const both = read('concierge: { index: true, launcher: true }');
		assert.deepEqual([both.index, both.launcher], [true, true]);
	});

	test('accepts an empty frontmatter as no frontmatter', () => {
		assert.deepEqual(read().frontmatter, {});
	});
});

describe('parseArticle errors', () => {
	test('point at the article line of malformed YAML', () => {
		const source = md('---', 'title: ok', 'tags: a: b', '---', '', 'Body.');
		assertArticleError(() => parseArticle(source, 'blog/bad-yaml.md'), 'blog/bad-yaml.md', 3, /malformed YAML frontmatter/);
	});

	test('refuse a frontmatter that is not a mapping', () => {
		assertArticleError(() => parseArticle(md('---', '- a', '- b', '---', 'Body.'), 'list.md'), 'list.md', 2, /must be a mapping.*not a list/);
		assertArticleError(() => parseArticle(md('---', 'just words', '---', 'Body.'), 'words.md'), 'words.md', 2, /must be a mapping.*not string/);
	});

	test('give the line of the first invalid UTF-8 byte', () => {
		const utf8 = (text: string) => [...new TextEncoder().encode(text)];
		const bytes = new Uint8Array([...utf8('# Title\n\nfine ü\nbad '), 0xc3, 0x28, ...utf8('\nbad again '), 0xff, 0x0a]);
		assertArticleError(() => parseArticle(bytes, 'latin1.md'), 'latin1.md', 4, /not valid UTF-8/);
	});

	test('refuse an article with nothing after its frontmatter', () => {
		assertArticleError(() => parseArticle(md('---', 'title: x', '---', '', '  ', '\t'), 'empty.md'), 'empty.md', undefined, /empty article/);
		assertArticleError(() => parseArticle(' \n\n', 'blank.mdx'), 'blank.mdx', undefined, /empty article/);
		assertArticleError(() => parseArticle(new Uint8Array(), 'zero.md'), 'zero.md', undefined, /empty article/);
	});

	test('refuse an article over 1 MB before parsing it, naming its size and the limit', () => {
		const big = '---\nnot: [valid\n---\n' + 'x'.repeat(1_048_577);
		assertArticleError(() => parseArticle(big, 'big.md'), 'big.md', undefined, /1048597 bytes.*1048576 bytes/);
		assertArticleError(() => parseArticle(new Uint8Array(1_048_577).fill(0x61), 'big.md'), 'big.md', undefined, /1048577 bytes/);
		// A code block is the cheapest 1 MB for micromark to parse.
		const atLimit = '```\n' + 'a'.repeat(1_048_576 - 9) + '\n```\n';
		assert.equal(parseArticle(atLimit, 'limit.md').sections[0]?.text.length, 1_048_576 - 9);
	});

	test('count a string article by its UTF-8 bytes, not its characters', () => {
		assertArticleError(() => parseArticle('あ'.repeat(400_000), 'ja.md'), 'ja.md', undefined, /1200000 bytes/);
	});

	test('refuse a `concierge` value other than a boolean or the known object, naming the key and its line', () => {
		const read = (file: string, ...frontmatter: string[]) => () => parseArticle(md('---', 'title: x', ...frontmatter, '---', 'Body.'), file);
		assertArticleError(read('a.md', 'concierge: no'), 'a.md', 3, /`concierge` must be true, false or \{ index\?: boolean, launcher\?: boolean \}, not "no"/);
		assertArticleError(read('b.md', 'concierge: [index]'), 'b.md', 3, /`concierge` must be/);
		assertArticleError(read('c.md', 'concierge:'), 'c.md', 3, /`concierge` must be .*not null/);
		assertArticleError(read('d.md', 'concierge:', '  launcher: false', '  index: "no"'), 'd.md', 5, /`concierge\.index` must be true or false, not "no"/);
		assertArticleError(read('e.md', 'concierge: { indx: false }'), 'e.md', 3, /`concierge\.indx` is not known/);
	});
});
