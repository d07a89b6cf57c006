import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ChromaClient } from 'chromadb';
import { startChromaServer, type ChromaServer } from '../../sidecar/chroma-server.ts';

describe('a real Chroma server', () => {
	let dir: string;
	let server: ChromaServer;
	let client: ChromaClient;

	before(async () => {
		dir = await mkdtemp(join(tmpdir(), 'concierge-chroma-'));
		server = await startChromaServer({ path: dir, port: 0 });
		client = new ChromaClient({ host: server.host, port: server.port });
	});

	after(async () => {
		await server?.close();
		await rm(dir, { recursive: true, force: true });
	});

	test('answers its heartbeat on a free port it picked itself', async () => {
		assert.ok(server.port > 0);
		const response = await fetch(`${server.url}/api/v2/heartbeat`);
		assert.equal(response.status, 200);
	});

	test('upserts chunks, gets them by id and finds the nearest by cosine distance', async () => {
		const collection = await client.createCollection({
			name: 'concierge-test',
			configuration: { hnsw: { space: 'cosine' } },
			embeddingFunction: null,
		});
		await collection.upsert({
			ids: ['/b/#0', '/a/#0', '/c/#0'],
			embeddings: [
				[0, 1, 0],
				[1, 0, 0],
				[0.6, 0.8, 0],
			],
			documents: ['bee', 'ant', 'cat'],
			metadatas: [{ url: '/b/' }, { url: '/a/' }, { url: '/c/' }],
		});
		assert.equal(await collection.count(), 3);

		const got = await collection.get({ ids: ['/c/#0', '/a/#0'], include: ['documents', 'metadatas'] });
		// Chroma answers in its own order, not the requested one: callers must restore it themselves.
		const byId = new Map(got.ids.map((id, i) => [id, got.documents[i]]));
		assert.deepEqual(new Set(got.ids), new Set(['/c/#0', '/a/#0']));
		assert.equal(byId.get('/c/#0'), 'cat');
		assert.equal(byId.get('/a/#0'), 'ant');

		const found = await collection.query({ queryEmbeddings: [[1, 0.1, 0]], nResults: 2, include: ['distances'] });
		assert.deepEqual(found.ids[0], ['/a/#0', '/c/#0']);
		const distances = found.distances[0]!;
		assert.ok(distances[0]! < 0.01, `cosine distance of a near-identical vector is ${distances[0]}`);
		assert.ok(Math.abs(distances[1]! - (1 - (0.6 + 0.08) / Math.hypot(1, 0.1))) < 1e-3);
	});

	test('keeps data across a restart on the same folder and stops for good on close', async () => {
		await server.close();
		const answering = await answeringPort(server.port);
		assert.equal(answering, undefined, `something still answers on port ${server.port}`);
		server = await startChromaServer({ path: dir, port: 0 });
		client = new ChromaClient({ host: server.host, port: server.port });
		const collection = await client.getCollection({ name: 'concierge-test' });
		assert.equal(await collection.count(), 3);
	});
});

describe('starting Chroma with a bad command', () => {
	test('names the command that could not run', async () => {
		const dir = await mkdtemp(join(tmpdir(), 'concierge-chroma-'));
		try {
			await assert.rejects(
				startChromaServer({ path: dir, prefix: join(dir, 'no-such-loader') }),
				/Could not start Chroma's server \(.*no-such-loader\)/,
			);
		} finally {
			await rm(dir, { recursive: true, force: true });
		}
	});
});

async function answeringPort(port: number): Promise<number | undefined> {
	try {
		await fetch(`http://127.0.0.1:${port}/api/v2/heartbeat`, { signal: AbortSignal.timeout(500) });
		return port;
	} catch {
		return undefined;
	}
}

describe('a process that starts Chroma and is then killed by a signal', () => {
	test('takes its Chroma server down with it', async () => {
		const dir = await mkdtemp(join(tmpdir(), 'concierge-chroma-'));
		const script = `import { startChromaServer } from ${JSON.stringify(new URL('../../sidecar/chroma-server.ts', import.meta.url).href)};
const server = await startChromaServer({ path: ${JSON.stringify(dir)} });
process.stdout.write(server.url + '\\n');
setInterval(() => {}, 1000);`;
		const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
		try {
			const url = await new Promise<string>((resolve, reject) => {
				child.stdout.on('data', (data: Buffer) => resolve(data.toString().trim()));
				child.on('exit', (code) => reject(new Error(`exited with ${code}`)));
			});
			assert.equal((await fetch(`${url}/api/v2/heartbeat`)).status, 200);
			child.kill('SIGTERM');
			const [, signal] = await once(child, 'exit');
			assert.equal(signal, 'SIGTERM', 'the signal still ends the process as it would have');
			await assert.rejects(fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(2000) }));
		} finally {
			child.kill('SIGKILL');
			await rm(dir, { recursive: true, force: true });
		}
	});
});
