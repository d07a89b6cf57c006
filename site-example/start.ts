// `npm start`: builds site-example and serves it with the concierge from one Node process plus Chroma, as a small VPS
// would run it. `npm start -- --fixtures` runs the same pipeline offline on the tiny models the tests make.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const usage = `Usage: npm start [-- --fixtures] [-- --port <port>] [-- --host <address>]

Builds site-example/ with the astro-concierge integration, then serves the site, the concierge's WebSocket,
/healthz and /metrics on one port (Chroma runs embedded, its data in .concierge/chroma).

  --fixtures   Use the tiny test models: works offline, the answers are not meant to make sense.
  --port       Port to listen on (default 4321; 0 picks a free one).
  --host       Address to listen on (default 127.0.0.1).
`;

const root = fileURLToPath(new URL('..', import.meta.url));
const astroBin = join(dirname(createRequire(import.meta.url).resolve('astro/package.json')), 'bin', 'astro.mjs');
const cli = fileURLToPath(new URL('../sidecar/cli.ts', import.meta.url));
const offlineHint = 'Without network access, `npm start -- --fixtures` runs the same pipeline offline on the tiny test models.';

const { values } = parseArgs({
	options: {
		fixtures: { type: 'boolean', default: false },
		port: { type: 'string', default: process.env.CONCIERGE_PORT ?? '4321' },
		host: { type: 'string', default: process.env.CONCIERGE_HOST ?? '127.0.0.1' },
		help: { type: 'boolean', short: 'h', default: false },
	},
});
if (values.help) {
	process.stdout.write(usage);
	process.exit(0);
}

const buildEnv: NodeJS.ProcessEnv = { ...process.env };
const serveArgs = [
	'serve',
	'--site', 'site-example/dist',
	'--chroma-path', '.concierge/chroma',
	'--bundle', '.concierge/bundle.jsonl',
	'--qa-log', '.concierge/qa.jsonl',
	'--port', values.port,
	'--host', values.host,
];
if (values.fixtures) {
	const { ensureTestModels } = await import('../test/models/make-models.ts');
	const models = await ensureTestModels();
	buildEnv.CONCIERGE_EMBEDDING_MODEL = models.e5;
	buildEnv.CONCIERGE_EMBEDDING_DTYPE = 'q8';
	// The tiny model's vectors sit further apart than e5's, so its matches need a looser limit.
	buildEnv.CONCIERGE_MAX_DISTANCE = '0.6';
	serveArgs.push('--model', models.llamaStops, '--threads', '1', '--embedding-model', models.e5, '--max-distance', '0.6');
}

const run = (args: string[], env: NodeJS.ProcessEnv, stderr: 'inherit' | 'pipe'): ChildProcess =>
	spawn(process.execPath, args, { cwd: root, env, stdio: ['inherit', 'inherit', stderr] });

const exitCode = (child: ChildProcess): Promise<number> =>
	new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));

process.stdout.write(`astro-concierge: building site-example${values.fixtures ? ' with the tiny test models' : ''}…\n`);
const built = await exitCode(run([astroBin, 'build', '--root', root], buildEnv, 'inherit'));
if (built !== 0) {
	process.stderr.write(`\nastro-concierge: building site-example failed (the error is above). ${values.fixtures ? '' : offlineHint}\n`);
	process.exit(built);
}

const sidecar = run([cli, ...serveArgs], process.env, 'pipe');
let listening = false;
// The sidecar logs JSON lines on stderr; they pass through, and the `listening` event becomes a line for people.
createInterface({ input: sidecar.stderr! }).on('line', (line) => {
	process.stderr.write(`${line}\n`);
	let event: { event?: string; address?: string; path?: string } | undefined;
	try {
		event = JSON.parse(line);
	} catch {
		return;
	}
	if (event?.event === 'listening' && event.address) {
		listening = true;
		process.stdout.write(
			`\nastro-concierge: site-example is served at ${event.address}/ with the concierge on ${event.path ?? '/concierge'}.\n` +
				'Open an article and press the "Ask this blog" button (or Ctrl+K / ⌘K). Stop with Ctrl+C.\n\n',
		);
	}
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => sidecar.kill(signal));
const served = await exitCode(sidecar);
if (served !== 0 && !listening && !values.fixtures) process.stderr.write(`\nastro-concierge: the sidecar could not start (the error is above). ${offlineHint}\n`);
process.exitCode = served;
