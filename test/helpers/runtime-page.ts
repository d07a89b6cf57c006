import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { startStaticServer, type StaticServer } from './static-server.ts';

/** A Chromium tab on a page that imports the island's own runtime modules. */
export interface RuntimePage {
	tab: Page;
	close(): Promise<void>;
}

/**
 * Serves `html` beside the named modules of integration/runtime/ and opens it in Chromium, waiting for the page to
 * set `window.ready`. Chromium cannot run TypeScript and the runtime has only erasable syntax, so stripping the
 * types gives the JavaScript the island ships; `./x.ts` imports between the modules become `./x.js`.
 */
export async function openRuntimePage(modules: readonly string[], html: string): Promise<RuntimePage> {
	const dir = await mkdtemp(join(tmpdir(), 'runtime-page-'));
	let server: StaticServer | undefined;
	let browser: Browser | undefined;
	const close = async (): Promise<void> => {
		await browser?.close();
		await server?.close();
		await rm(dir, { recursive: true, force: true });
	};
	try {
		for (const name of modules) {
			const source = await readFile(new URL(`../../integration/runtime/${name}.ts`, import.meta.url), 'utf8');
			await writeFile(join(dir, `${name}.js`), stripTypeScriptTypes(source).replace(/from '\.\/([\w-]+)\.ts'/g, "from './$1.js'"));
		}
		await writeFile(join(dir, 'index.html'), html);
		server = await startStaticServer({ '/': dir });
		browser = await launchChromium();
		const tab = await browser.newPage();
		await tab.goto(`${server.url}/`);
		await tab.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
		return { tab, close };
	} catch (error) {
		await close();
		throw error;
	}
}
