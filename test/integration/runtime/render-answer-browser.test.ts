import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { openRuntimePage, type RuntimePage } from '../../helpers/runtime-page.ts';

// `window.render` renders an answer into a fresh #answer with sources 1 and 2 known; `window.imageFailed` resolves
// once an <img src=x> has failed, after which any injected onerror would have run too.
const page = `<!doctype html>
<meta charset="utf-8">
<div id="answer"></div>
<script type="module">
	import { parseAnswer, renderAnswer } from './render-answer.js';
	const sources = { 1: { href: '/posts/astro/#setup', label: 'Astro setup' }, 2: { href: '/posts/ja/', label: '日本語の記事' } };
	window.render = (text) => {
		const answer = document.getElementById('answer');
		answer.replaceChildren(renderAnswer(document, parseAnswer(text), (n) => sources[n] ?? null));
	};
	window.imageFailed = () => new Promise((resolve) => {
		const image = new Image();
		image.onerror = resolve;
		image.src = 'x';
	});
	window.ready = true;
</script>`;

describe('renderAnswer in Chromium', () => {
	let runtime: RuntimePage;
	let tab: Page;

	before(async () => {
		runtime = await openRuntimePage(['render-answer'], page);
		tab = runtime.tab;
	});

	after(() => runtime?.close());

	async function render(text: string): Promise<void> {
		await tab.evaluate((text) => (window as unknown as { render: (text: string) => void }).render(text), text);
	}

	test('keeps HTML and link syntax from the model as literal text that never runs', async () => {
		const answer = [
			'<img src=x onerror="window.__xss=1">',
			'<script>window.__xss=1</script>',
			'[1](javascript:alert(1)) and [9]',
		].join('\n');
		await render(answer);
		await tab.evaluate(() => (window as unknown as { imageFailed: () => Promise<void> }).imageFailed());
		const result = await tab.evaluate(() => {
			const answer = document.getElementById('answer')!;
			return {
				text: answer.textContent,
				tags: [...answer.querySelectorAll('*')].map((element) => element.tagName.toLowerCase()),
				hrefs: [...answer.querySelectorAll('[href]')].map((element) => element.getAttribute('href')),
				xss: (window as unknown as { __xss?: unknown }).__xss,
			};
		});
		assert.equal(result.xss, undefined);
		assert.equal(result.text, answer.replaceAll('\n', ''));
		assert.deepEqual(result.tags, ['p', 'br', 'br', 'a']);
		assert.deepEqual(result.hrefs, ['/posts/astro/#setup']);
	});

	test('links known citations with their label and leaves unknown ones as text', async () => {
		await render('答えです[1][2]、根拠は[3]。');
		const links = await tab.$$eval('#answer a', (links) =>
			links.map((link) => ({
				class: link.className,
				href: link.getAttribute('href'),
				text: link.textContent,
				label: link.getAttribute('aria-label'),
				title: link.getAttribute('title'),
			})),
		);
		assert.deepEqual(links, [
			{ class: 'concierge-cite', href: '/posts/astro/#setup', text: '[1]', label: 'Astro setup', title: 'Astro setup' },
			{ class: 'concierge-cite', href: '/posts/ja/', text: '[2]', label: '日本語の記事', title: '日本語の記事' },
		]);
		assert.equal(await tab.$eval('#answer', (answer) => answer.textContent), '答えです[1][2]、根拠は[3]。');
	});

	test('builds paragraphs, lists, code blocks and inline formatting as elements', async () => {
		await render('## 手順\n\n3. **install**\n4. run `astro build`\n\n- *a*\n\n```sh\necho "<b>"\n```');
		const html = await tab.$eval('#answer', (answer) => answer.innerHTML);
		assert.equal(
			html,
			'<p><strong>手順</strong></p>' +
				'<ol start="3"><li><strong>install</strong></li><li>run <code>astro build</code></li></ol>' +
				'<ul><li><em>a</em></li></ul>' +
				'<pre><code data-language="sh">echo "&lt;b&gt;"</code></pre>',
		);
	});
});
