import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PANEL = '[data-astro-concierge-panel]';

// Exactly the README's offline command, so what a newcomer runs is what CI runs.
describe('npm start -- --fixtures', () => {
	let child: ChildProcess;
	let output = '';
	let url: string;
	let browser: Browser;

	before(async () => {
		child = spawn('npm', ['start', '--', '--fixtures', '--port', '0'], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
		child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
		url = await new Promise<string>((resolve, reject) => {
			child.stdout!.on('data', (data: Buffer) => {
				output += data.toString();
				const served = /site-example is served at (http:\/\/\S+?)\/? with/.exec(output);
				if (served) resolve(served[1]!);
			});
			child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before serving:\n${output}`)));
		});
		browser = await launchChromium();
	});

	after(async () => {
		await browser?.close();
		if (child?.exitCode === null) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			process.kill(-child.pid!, 'SIGINT');
			await exited;
		}
	});

	test('serves site-example, and the concierge on an article lists its sources and streams an answer', async () => {
		const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
		await page.goto(`${url}/blog/postgresql-backups/`);
		await page.locator('astro-concierge button').click();
		await page.locator(`${PANEL} dialog[open]`).waitFor();
		await page.waitForFunction((panel) => document.querySelector(panel)?.getAttribute('data-search') === 'ready', PANEL, { timeout: 60_000 });
		await page.locator(`${PANEL} button.suggestion`, { hasText: 'How do I back up PostgreSQL?' }).click();
		await page.waitForFunction(
			(panel) => document.querySelector(panel)?.shadowRoot?.querySelector('[role="status"]')?.textContent === 'Answer complete',
			PANEL,
			{ timeout: 60_000 },
		);
		const turn = page.locator(`${PANEL} .turn`).last();
		const sources = await turn.locator('.sources li').allTextContents();
		assert.ok(sources.some((source) => source.startsWith('PostgreSQL backups you can actually restore')), sources.join('\n'));
		assert.ok(((await turn.locator('.answer').textContent()) ?? '').length > 'Concierge: '.length);

		// The README's picture: regenerated with CONCIERGE_UPDATE_SCREENSHOT=1 and committed.
		const shot = process.env.CONCIERGE_UPDATE_SCREENSHOT === '1' ? join(root, 'docs', 'screenshot.png') : join(root, 'test', '.work', 'screenshot.png');
		await mkdir(join(shot, '..'), { recursive: true });
		await page.screenshot({ path: shot });
		await page.close();
	});

	test('answers /healthz on the same port', async () => {
		const response = await fetch(`${url}/healthz`);
		assert.equal(response.status, 200);
	});
});
