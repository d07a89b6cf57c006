import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { matchHeadingIds, readPageHeadings } from '../../integration/read-page-headings.ts';

describe('reading the headings of a built page', () => {
	const page = readPageHeadings(`<html><body>
		<header><h2>Site name</h2></header>
		<h1 id="intro">Intro</h1>
		<h2 id="dont-panic--its-fine">Don\u2019t panic \u2013 it\u2019s \u201cfine\u201d\u2026</h2>
		<h2 id="setup"><code>npm</code> setup</h2>
		<p id="note">A paragraph with an id.</p>
	</body></html>`);

	test('lists headings with ids in order and every id on the page', () => {
		assert.deepEqual(
			page.headings.map((heading) => heading.id),
			['intro', 'dont-panic--its-fine', 'setup'],
		);
		assert.ok(page.ids.has('note'));
	});

	test('matches markdown headings to the rendered ones despite smartypants quotes, dashes and ellipses', () => {
		assert.deepEqual(matchHeadingIds(['Intro', 'Don\'t panic -- it\'s "fine"...', 'npm setup'], page), [
			'intro',
			'dont-panic--its-fine',
			'setup',
		]);
	});

	test('gives an empty id to a heading the page does not have, without losing its place for the rest', () => {
		assert.deepEqual(matchHeadingIds(['Intro', 'Missing', 'npm setup'], page), ['intro', '', 'setup']);
	});
});
