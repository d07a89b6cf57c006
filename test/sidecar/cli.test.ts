import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ChromaClient } from 'chromadb';
import { formatBundle } from '../../integration/bundle.ts';
import { bundleHeader } from '../helpers/bundle-header.ts';
import { startChromaServer, type ChromaServer } from '../../sidecar/chroma-server.ts';
import { ensureTestModels, type TestModels } from '../models/make-models.ts';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../sidecar/cli.ts', import.meta.url));

describe('the astro-concierge command', () => {
	let dir: string;
	let chroma: ChromaServer;
	let models: TestModels;
	let bundle: string;

	before(async () => {
		models = await ensureTestModels();
		dir = await mkdtemp(join(tmpdir(), 'concierge-cli-'));
		chroma = await startChromaServer({ path: join(dir, 'chroma') });
		bundle = join(dir, 'bundle.jsonl');
		const embedding = (i: number) => Array.from({ length: 4 }, (_, j) => (j === i % 4 ? 1 : 0));
		await writeFile(
			bundle,
			formatBundle(
				bundleHeader({ dimension: 4, contentVersion: 'cli-1', chunks: 3 }),
				[0, 1, 2].map((i) => ({
					id: `/p${i}/#0`,
					text: `Text of page ${i}.`,
					metadata: { url: `/p${i}/`, anchor: '', title: `Page ${i}`, heading: '', lang: 'en', articleHash: `h${i}` },
					embedding: embedding(i),
				})),
			),
		);
	});

	after(async () => {
		await chroma?.close();
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	test('lists every serve option with its environment variable and default', async () => {
		const { stdout } = await run(process.execPath, [cli, 'serve', '--help']);
		for (const flag of ['--port', '--host', '--model', '--threads', '--chroma-url', '--chroma-path', '--collection', '--bundle', '--origins', '--context-size', '--max-tokens', '--temperature', '--top-k', '--max-distance', '--metrics-public', '--provider', '--rate-limit', '--trust-proxy', '--qa-log', '--no-qa-log']) {
			assert.match(stdout, new RegExp(`^  ${flag}\\b`, 'm'), `${flag} is not listed`);
		}
		assert.match(stdout, /--port <value>\s+.*\(env CONCIERGE_PORT, default 8787\)/);
		assert.match(stdout, /--chroma-url <value>\s+.*\(env CHROMA_URL\)/);
	});

	test('ingests a bundle into Chroma with its header as collection metadata', async () => {
		const { stdout } = await run(process.execPath, [cli, 'ingest', bundle, '--chroma-url', chroma.url, '--collection', 'cli-test']);
		assert.match(stdout, /3 upserted, 0 deleted, 0 unchanged \(content cli-1\)/);
		const collection = await new ChromaClient({ host: chroma.host, port: chroma.port }).getCollection({ name: 'cli-test' });
		assert.equal(await collection.count(), 3);
		assert.equal(collection.metadata?.contentVersion, 'cli-1');
	});

	test('refuses unknown options and a missing Chroma with a message and exit code 2', async () => {
		await assert.rejects(run(process.execPath, [cli, 'serve', '--prot', '1']), (error: { code: number; stderr: string }) => {
			assert.equal(error.code, 2);
			assert.match(error.stderr, /Unknown option '--prot'/);
			return true;
		});
		await assert.rejects(run(process.execPath, [cli, 'ingest', bundle], { env: { ...process.env, CHROMA_URL: '' } }), (error: { code: number; stderr: string }) => {
			assert.equal(error.code, 2);
			assert.match(error.stderr, /Chroma is needed/);
			return true;
		});
	});

	test('serves with a local model, answers /healthz and exits 0 on SIGTERM', async () => {
		const child = spawn(
			process.execPath,
			[cli, 'serve', '--port', '0', '--model', models.llamaStops, '--threads', '1', '--context-size', '1024', '--max-tokens', '64', '--chroma-url', chroma.url, '--bundle', bundle, '--no-qa-log'],
			{ stdio: ['ignore', 'pipe', 'pipe'] },
		);
		let log = '';
		child.stderr.on('data', (data) => (log += data));
		try {
			const address = await new Promise<string>((resolve, reject) => {
				child.stderr.on('data', () => {
					const match = /"event":"listening","address":"([^"]+)"/.exec(log);
					if (match) resolve(match[1]!);
				});
				child.on('exit', () => reject(new Error(`serve exited early:\n${log}`)));
			});
			assert.match(log, /"event":"provider","provider":"local:tiny-llama-stops\.gguf"/);
			const health = await fetch(`${address}/healthz`);
			assert.equal(health.status, 200);
			assert.equal(((await health.json()) as { kb_version: string }).kb_version, 'cli-1');
			child.kill('SIGTERM');
			const [code] = await once(child, 'exit');
			assert.equal(code, 0, log);
		} finally {
			child.kill('SIGKILL');
		}
	});
});
