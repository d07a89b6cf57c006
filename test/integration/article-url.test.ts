import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { articleOrigin, formatPageUrl, withBase } from '../../integration/article-url.ts';

const directory = { base: '/', format: 'directory', trailingSlash: 'ignore' } as const;

describe('page URLs', () => {
	test('end in a slash for the directory format, except with trailingSlash never', () => {
		assert.equal(formatPageUrl('/blog/post', false, directory), '/blog/post/');
		assert.equal(formatPageUrl('/blog/post', false, { ...directory, trailingSlash: 'never' }), '/blog/post');
		assert.equal(formatPageUrl('/', true, directory), '/');
	});

	test('end in .html for the file format, and for non-index pages with preserve', () => {
		assert.equal(formatPageUrl('/blog/post', false, { ...directory, format: 'file' }), '/blog/post.html');
		assert.equal(formatPageUrl('/blog/post', false, { ...directory, format: 'preserve' }), '/blog/post.html');
		assert.equal(formatPageUrl('/blog', true, { ...directory, format: 'preserve' }), '/blog/');
	});

	test('live under the site base, with or without its trailing slash', () => {
		assert.equal(formatPageUrl('/blog/post', false, { ...directory, base: '/docs' }), '/docs/blog/post/');
		assert.equal(formatPageUrl('/blog/post', false, { ...directory, base: '/docs/' }), '/docs/blog/post/');
		assert.equal(withBase('/blog/x/', '/docs/'), '/docs/blog/x/');
	});

	test('are percent-encoded as the built site links them, without encoding twice', () => {
		assert.equal(formatPageUrl('/日本語/東京', false, directory), '/%E6%97%A5%E6%9C%AC%E8%AA%9E/%E6%9D%B1%E4%BA%AC/');
		assert.equal(withBase('/%E6%97%A5/a b/', '/'), '/%E6%97%A5/a%20b/');
	});
});

describe('collection entries', () => {
	const context = { srcDir: '/site/src', pagePathnames: new Map([['/site/src/pages/about.md', '/about']]) };

	test('take their id from the slugified path, as Astro\'s glob loader does', () => {
		const origin = articleOrigin('/site/src/content/blog/My First Post/index.md', {}, context);
		assert.deepEqual(origin?.kind === 'collection' && [origin.entry.collection, origin.entry.id], ['blog', 'my-first-post']);
	});

	test('take a slug from the frontmatter when it has one', () => {
		const origin = articleOrigin('/site/src/content/blog/x.md', { slug: 'custom/path' }, context);
		assert.equal(origin?.kind === 'collection' && origin.entry.id, 'custom/path');
	});

	test('are told apart from routed pages and from files with no known URL', () => {
		assert.deepEqual(articleOrigin('/site/src/pages/about.md', {}, context), { kind: 'page', pathname: '/about', isIndex: false });
		assert.equal(articleOrigin('/site/src/notes/loose.md', {}, context), undefined);
	});
});
