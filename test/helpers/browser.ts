import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium: playwright's own browser downloads cannot work on these machines. */
export const chromiumPath = process.env.CONCIERGE_CHROMIUM ?? '/usr/bin/chromium';

// Without the background-networking flags Chromium keeps dialing out, and this machine refuses every such connection.
const flags = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

/** Launches headless Chromium with a fresh profile; fails with what to install when it is missing. */
export async function launchChromium(): Promise<Browser> {
	if (!existsSync(chromiumPath)) {
		throw new Error(
			`Chromium is missing at ${chromiumPath}: install it with 'apt-get install -y chromium' (or set CONCIERGE_CHROMIUM to its path).`,
		);
	}
	return chromium.launch({ executablePath: chromiumPath, args: flags, headless: true });
}
