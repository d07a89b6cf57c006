// `npm run bench`: every benchmark of the project in one run, on the tiny test models unless real ones are
// given; prints one table per benchmark and writes docs/benchmarks.md and docs/benchmarks.json.
//
//   npm run bench -- [--gguf FILE.gguf] [--e5 MODEL_FOLDER] [--threads N]
//
// or CONCIERGE_BENCH_GGUF, CONCIERGE_BENCH_E5, CONCIERGE_BENCH_THREADS. No test fails on a time; a target
// missed is written down as missed.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureTestModels } from '../models/make-models.ts';
import { measureInBrowser } from './browser.ts';
import { benchBuild } from './build.ts';
import { benchBrowserSearch, benchKbPayload } from './kb.ts';
import { formatResult, type BenchResult } from './report.ts';
import { benchSidecar } from './sidecar.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

const { values } = parseArgs({
	options: { gguf: { type: 'string' }, e5: { type: 'string' }, threads: { type: 'string' } },
});
const models = await ensureTestModels();
const gguf = values.gguf ?? process.env.CONCIERGE_BENCH_GGUF;
const e5 = values.e5 ?? process.env.CONCIERGE_BENCH_E5;
const threadsText = values.threads ?? process.env.CONCIERGE_BENCH_THREADS;
// The tiny model is fastest on one thread; a real one gets the sidecar's own default.
const threads = threadsText ? Number(threadsText) : gguf ? undefined : 1;
if (threads !== undefined && !(Number.isInteger(threads) && threads > 0)) {
	throw new Error(`--threads (or CONCIERGE_BENCH_THREADS) must be a positive integer, got "${threadsText}"`);
}
const { SIDECAR_DEFAULTS } = await import('../../sidecar/sidecar-defaults.ts');

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const machine = {
	cpu: cpus()[0]?.model ?? 'unknown',
	logicalCpus: cpus().length,
	memoryBytes: totalmem(),
	freeMemoryBytesAtStart: freemem(),
	loadAverageAtStart: loadavg(),
	node: process.version,
	platform: `${process.platform} ${process.arch}`,
};
const commit = git('rev-parse', 'HEAD');
// Not trimmed: each porcelain line starts with two status columns, the first of which may be a space.
const uncommitted = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' })
	.split('\n')
	.filter(Boolean)
	.map((line) => line.slice(3));
const command = `npm run bench${gguf ? ` -- --gguf ${gguf}` : ''}${e5 ? ` --e5 ${e5}` : ''}${threadsText ? ` --threads ${threadsText}` : ''}`;

await mkdir(join(root, 'test', '.work'), { recursive: true });
const work = await mkdtemp(join(root, 'test', '.work', 'bench-'));
const started = performance.now();
const results: BenchResult[] = [];
const report = (result: BenchResult) => {
	results.push(result);
	process.stdout.write(`\n${formatResult(result)}`);
};
let chromium = '';
try {
	// The browser first, while nothing else of this run competes for the two cores.
	process.stdout.write('Measuring kb.json in Chromium…\n');
	const browser = await measureInBrowser(join(work, 'web'), { load: [2000, 20_000], search: [1000, 10_000, 100_000] });
	chromium = browser.chromium;
	process.stdout.write('Measuring kb.json size and ranking fidelity…\n');
	report(await benchKbPayload(browser));
	report(benchBrowserSearch(browser));

	process.stdout.write('\nBuilding the generated site twice…\n');
	const built = await benchBuild(e5 ? resolve(e5) : models.e5Wide);
	try {
		process.stdout.write('Measuring the sidecar…\n');
		const sidecar = await benchSidecar({
			model: gguf ? resolve(gguf) : models.llamaEndless,
			threads: threads ?? SIDECAR_DEFAULTS.threads,
			maxTokens: gguf ? 128 : 200,
			bundle: join(built.site.dir, '.concierge', 'bundle.jsonl'),
			kbPath: join(built.site.dir, 'dist', 'concierge', 'kb.json'),
			dir: join(work, 'sidecar'),
			rounds: 5,
		});
		const [overhead, memory, load] = sidecar;
		report(overhead!);
		report(built.result);
		report(memory!);
		report(load!);
	} finally {
		await built.site.remove();
	}
} finally {
	await rm(work, { recursive: true, force: true });
}

const seconds = (performance.now() - started) / 1000;
const order = ['kb', 'search', 'sidecar', 'build', 'memory', 'load'];
results.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
const missed = results.flatMap((result) => result.targets.filter((target) => !target.met).map((target) => ({ section: result.title, ...target })));
const loadAtEnd = loadavg();

const header = `# Benchmarks

Written by \`${command}\` (test/bench/run.ts) from one run; do not edit by hand. The raw figures are in [benchmarks.json](benchmarks.json).

- Commit: \`${commit}\`${uncommitted.length > 0 ? `, with uncommitted changes to ${uncommitted.map((file) => `\`${file}\``).join(', ')}` : ''}
- Machine: ${machine.cpu}, ${machine.logicalCpus} logical CPUs, ${(machine.memoryBytes / 1024 ** 3).toFixed(1)} GiB memory; ${machine.platform}, Node ${machine.node}, Chromium ${chromium}
- Load average (1, 5, 15 min) at the start: ${machine.loadAverageAtStart.map((value) => value.toFixed(2)).join(', ')}; at the end: ${loadAtEnd.map((value) => value.toFixed(2)).join(', ')}. Other work on the machine slows every figure; a load above the CPU count means the run shared them.
- Models: ${gguf ? basename(gguf) : 'tiny-llama-endless, the GGUF the project makes for its tests'} (answers); ${e5 ? basename(e5) : 'tiny-e5-384, the project\'s test embedding model at e5-small\'s width'} (build)
- The whole run took ${seconds.toFixed(0)} s.

${missed.length === 0 ? 'Every target was met.' : `Targets missed (${missed.length}):\n\n${missed.map((target) => `- ${target.section}: ${target.what} ${target.measured}, target ${target.target}${target.note ? `; ${target.note}` : ''}`).join('\n')}`}
`;
await writeFile(join(root, 'docs', 'benchmarks.md'), `${header}\n${results.map(formatResult).join('\n')}`);
await writeFile(
	join(root, 'docs', 'benchmarks.json'),
	`${JSON.stringify({ command, commit, uncommitted, machine: { ...machine, loadAverageAtEnd: loadAtEnd, chromium }, seconds, results: results.map(({ id, title, targets, raw }) => ({ id, title, targets, raw })) }, null, '\t')}\n`,
);
process.stdout.write(`\nWrote docs/benchmarks.md and docs/benchmarks.json in ${seconds.toFixed(0)} s.\n`);
