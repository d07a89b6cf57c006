import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify, stripVTControlCharacters } from 'node:util';
import { ensureTestModels } from '../models/make-models.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const astroVersion = (createRequire(import.meta.url)('astro/package.json') as { version: string }).version;

// The published package must work from its emitted JavaScript alone: the project lives outside this
// repository, so nothing can resolve from the repository's node_modules or its TypeScript sources.
describe('the packed package installed into a fresh Astro project', () => {
	let dir: string;
	let buildLog: string;

	before(async () => {
		const models = await ensureTestModels();
		dir = await mkdtemp(join(tmpdir(), 'concierge-pack-'));
		const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, maxBuffer: 1 << 26 });
		const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [{ filename: string }];
		const project = join(dir, 'site');
		await mkdir(join(project, 'src', 'pages'), { recursive: true });
		await writeFile(join(project, '.npmrc'), 'onnxruntime-node-install=skip\n');
		await writeFile(
			join(project, 'package.json'),
			JSON.stringify({
				name: 'fresh-site',
				private: true,
				type: 'module',
				dependencies: { astro: astroVersion, 'astro-concierge': `file:${join(dir, packed.filename)}` },
			}),
		);
		await writeFile(
			join(project, 'astro.config.mjs'),
			`import { defineConfig } from 'astro/config';\nimport concierge from 'astro-concierge';\n\nexport default defineConfig({ integrations: [concierge({ model: ${JSON.stringify(models.e5)}, dtype: 'fp32' })] });\n`,
		);
		await writeFile(join(project, 'src', 'pages', 'index.md'), '---\ntitle: Hello\n---\n\n# Hello\n\nA fresh site.\n\n## Install\n\nRun npm install and then npm start.\n');
		await writeFile(
			join(project, 'src', 'pages', 'ask.astro'),
			"---\nimport Concierge from 'astro-concierge/Concierge.astro';\n---\n<html lang=\"en\"><head><title>Ask</title></head><body><Concierge /></body></html>\n",
		);
		await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project, maxBuffer: 1 << 26 });
		const built = await run('npx', ['astro', 'build'], { cwd: project, maxBuffer: 1 << 26 });
		// CI forces colours on; the assertions read plain text.
		buildLog = stripVTControlCharacters(built.stdout + built.stderr);
	});

	after(async () => {
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	test('builds the site and its knowledge base with the integration enabled', async () => {
		assert.match(buildLog, /\[astro-concierge:kb\] 2 chunks from 1 articles \(2 embedded, 0 reused\)/);
		const html = await readFile(join(dir, 'site', 'dist', 'index.html'), 'utf8');
		assert.match(html, /A fresh site\./);
		const kbText = await readFile(join(dir, 'site', 'dist', 'concierge', 'kb.json'), 'utf8');
		// The published reader, imported by its package name as other tools would.
		const script = `import { readKb } from 'astro-concierge/kb'; const kb = readKb(process.argv[1]); console.log(kb.chunks.map((c) => c.id).join(' '));`;
		const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, kbText], { cwd: join(dir, 'site') });
		assert.equal(stdout.trim(), '/#0 /#1');
	});

	test('places the concierge with its component and serves the island files from the site', async () => {
		const html = await readFile(join(dir, 'site', 'dist', 'ask', 'index.html'), 'utf8');
		assert.match(html, /<astro-concierge data-placement="inline"><\/astro-concierge>/);
		assert.match(html, /<script type="module" src="\/_astro\/[^"]+\.js"><\/script>/);
		assert.match(buildLog, /\[astro-concierge:island\] copied 3 runtime files \(\d+ bytes\) to dist\/concierge\/runtime\//);
		assert.match(buildLog, /\[astro-concierge:island\] copied 4 files of model tiny-e5 /);
	});

	test('ships JavaScript, not TypeScript sources', async () => {
		const { stdout } = await run('npm', ['ls', '--parseable', 'astro-concierge'], { cwd: join(dir, 'site') });
		const installed = stdout.trim().split('\n').at(-1)!;
		const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { exports: object };
		assert.match(JSON.stringify(manifest.exports), /dist\/integration\/index\.js/);
		const { stdout: files } = await run('find', [installed, '-name', '*.ts', '-not', '-name', '*.d.ts', '-not', '-path', '*/node_modules/*']);
		assert.equal(files.trim(), '', 'TypeScript sources were published');
	});

	test('installs a working astro-concierge command', async () => {
		const { stdout } = await run(join(dir, 'site', 'node_modules', '.bin', 'astro-concierge'), ['--version']);
		const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
		assert.equal(stdout.trim(), version);
	});

	test('refuses a misspelt option when the integration is created, naming it', async () => {
		const script = "import concierge from 'astro-concierge'; try { concierge({ modle: 'x' }); } catch (e) { console.log(e.message); }";
		const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: join(dir, 'site') });
		assert.match(stdout, /Invalid astro-concierge options/);
		assert.match(stdout, /modle/);
	});
});
