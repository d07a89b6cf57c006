import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

const testDir = fileURLToPath(new URL('..', import.meta.url));
/** Astro's command-line entry, run with this Node. */
export const astroBin = join(dirname(createRequire(import.meta.url).resolve('astro/package.json')), 'bin', 'astro.mjs');

/** A scratch copy of a fixture site: tests may change its articles without touching the repository's. */
export interface FixtureSite {
	dir: string;
	remove(): Promise<void>;
}

/**
 * Copies `test/fixtures/<name>` to a scratch folder under `test/.work/`, at the same depth as the fixture,
 * so its config's relative imports and the repository's node_modules resolve as they do for the original.
 */
export async function copyFixture(name: string): Promise<FixtureSite> {
	const work = join(testDir, '.work');
	await mkdir(work, { recursive: true });
	const dir = await mkdtemp(join(work, `${name}-`));
	await cp(join(testDir, 'fixtures', name), dir, {
		recursive: true,
		filter: (source) => !/[\\/](dist|\.astro|\.concierge|node_modules)$/.test(source),
	});
	return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Runs `astro build` on a site in a child process and returns its exit code and plain-text log. */
export function buildSite(dir: string, env: Record<string, string | undefined> = {}): Promise<{ code: number; log: string }> {
	return new Promise((resolve) => {
		execFile(
			process.execPath,
			[astroBin, 'build', '--root', dir],
			{ cwd: dir, env: { ...process.env, ...env }, maxBuffer: 1 << 26 },
			(error, stdout, stderr) => {
				const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
				resolve({ code, log: stripVTControlCharacters(stdout + stderr) });
			},
		);
	});
}
