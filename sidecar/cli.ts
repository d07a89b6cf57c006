#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnswerProvider } from './answer-provider.ts';
import type { SidecarOptions } from './create-sidecar.ts';
import { PACKAGE_VERSION } from '../integration/package-version.ts';
import { SIDECAR_DEFAULTS as D } from './sidecar-defaults.ts';

/** The instruct model `serve` downloads once when --model is not given (see the README for why this one). */
const DEFAULT_MODEL = 'hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M';

interface Flag {
	type: 'string' | 'boolean';
	env?: string;
	default?: string;
	help: string;
}

// One table drives parsing, environment variables and --help, so they cannot disagree.
const serveFlags: Record<string, Flag> = {
	port: { type: 'string', env: 'CONCIERGE_PORT', default: String(D.port), help: 'Port for the WebSocket, /healthz and /metrics.' },
	host: { type: 'string', env: 'CONCIERGE_HOST', default: D.host, help: 'Interface to listen on.' },
	provider: { type: 'string', env: 'CONCIERGE_PROVIDER', default: 'local', help: 'local (a GGUF through node-llama-cpp) or openai (an OpenAI-compatible endpoint).' },
	model: { type: 'string', env: 'CONCIERGE_MODEL', default: DEFAULT_MODEL, help: 'GGUF file, or an hf: URI downloaded once into --models-dir.' },
	'models-dir': { type: 'string', env: 'CONCIERGE_MODELS_DIR', default: join(homedir(), '.cache', 'astro-concierge', 'models'), help: 'Where downloaded models are kept.' },
	threads: { type: 'string', env: 'CONCIERGE_THREADS', default: String(D.threads), help: 'CPU threads for the model (physical cores by default).' },
	'context-size': { type: 'string', env: 'CONCIERGE_CONTEXT_SIZE', default: String(D.contextSize), help: 'Model context in tokens.' },
	'max-tokens': { type: 'string', env: 'CONCIERGE_MAX_TOKENS', default: String(D.maxTokens), help: 'Longest answer in tokens.' },
	temperature: { type: 'string', env: 'CONCIERGE_TEMPERATURE', default: String(D.temperature), help: 'Sampling temperature (0 is greedy).' },
	'top-k': { type: 'string', env: 'CONCIERGE_TOP_K', default: String(D.topK), help: 'Most chunks the sidecar\'s own search returns.' },
	'max-distance': { type: 'string', env: 'CONCIERGE_MAX_DISTANCE', default: String(D.maxDistance), help: 'Largest cosine distance of a chunk the sidecar\'s own search keeps.' },
	'chroma-url': { type: 'string', env: 'CHROMA_URL', help: 'A running Chroma server.' },
	'chroma-path': { type: 'string', env: 'CONCIERGE_CHROMA_PATH', help: 'Data folder of a Chroma server the sidecar starts and stops itself.' },
	collection: { type: 'string', env: 'CONCIERGE_COLLECTION', default: D.collection, help: 'Chroma collection.' },
	bundle: { type: 'string', env: 'CONCIERGE_BUNDLE', help: 'Private bundle loaded into Chroma at start when its content changed.' },
	'embedding-model': { type: 'string', env: 'CONCIERGE_EMBEDDING_MODEL', help: 'Embedding model for the sidecar\'s own search (default: the one the collection names).' },
	site: { type: 'string', env: 'CONCIERGE_SITE', help: 'A built Astro site (its dist folder) to serve on the same port, through @astrojs/node\'s handler when it has one.' },
	origins: { type: 'string', env: 'CONCIERGE_ORIGINS', help: 'Comma-separated origins allowed to connect (default: the sidecar\'s own).' },
	'queue-max': { type: 'string', env: 'CONCIERGE_QUEUE_MAX', default: String(D.queueMax), help: 'Most jobs waiting; more are answered BUSY.' },
	'queue-timeout': { type: 'string', env: 'CONCIERGE_QUEUE_TIMEOUT', default: String(D.queueTimeoutMs / 1000), help: 'Seconds a job may wait for its turn.' },
	'rate-limit': { type: 'string', env: 'CONCIERGE_RATE_LIMIT', default: String(D.rateLimit), help: 'Jobs per minute per client address; 0 turns it off.' },
	'trust-proxy': { type: 'boolean', env: 'CONCIERGE_TRUST_PROXY', help: 'Take the client address from X-Forwarded-For (behind nginx).' },
	'metrics-public': { type: 'boolean', env: 'CONCIERGE_METRICS_PUBLIC', help: 'Answer /metrics to any address, not only loopback.' },
	'qa-log': { type: 'string', env: 'CONCIERGE_QA_LOG', default: 'concierge-qa.jsonl', help: 'Q&A log (JSON lines, rotated at 10 MiB).' },
	'no-qa-log': { type: 'boolean', help: 'Keep no Q&A log.' },
	'base-url': { type: 'string', env: 'CONCIERGE_BASE_URL', help: 'openai provider: the endpoint, e.g. http://127.0.0.1:8080/v1.' },
	'model-name': { type: 'string', env: 'CONCIERGE_MODEL_NAME', help: 'openai provider: the model name to request.' },
	'api-key-file': { type: 'string', env: 'CONCIERGE_API_KEY_FILE', help: 'openai provider: file holding the API key (or set CONCIERGE_API_KEY).' },
	tokenizer: { type: 'string', env: 'CONCIERGE_TOKENIZER', help: 'openai provider: a GGUF whose vocabulary counts the remote model\'s tokens.' },
};

const ingestFlags: Record<string, Flag> = {
	'chroma-url': serveFlags['chroma-url']!,
	'chroma-path': serveFlags['chroma-path']!,
	collection: serveFlags.collection!,
};

const usage = `Usage: astro-concierge <command> [options]

The astro-concierge sidecar: answers questions about an Astro site's articles.

Commands:
  serve              Start the answer service.
  ingest <bundle>    Load a build's private bundle into Chroma.
  help               Show this help.
  version            Print the installed version.

Options of serve (each also read from the environment variable shown):
${describe(serveFlags)}
Options of ingest:
${describe(ingestFlags)}`;

function describe(flags: Record<string, Flag>): string {
	return Object.entries(flags)
		.map(([name, flag]) => {
			const left = `  --${name}${flag.type === 'string' ? ' <value>' : ''}`;
			const extra = [flag.env && `env ${flag.env}`, flag.default !== undefined && `default ${flag.default}`].filter(Boolean).join(', ');
			return `${left.padEnd(30)} ${flag.help}${extra ? ` (${extra})` : ''}`;
		})
		.join('\n');
}

/** Flag values, then environment variables, then defaults. */
function read(flags: Record<string, Flag>, values: Record<string, string | boolean | undefined>) {
	const get = (name: string): string | undefined => {
		const flag = flags[name]!;
		const value = values[name];
		if (value !== undefined) return String(value);
		if (flag.env && process.env[flag.env] !== undefined && process.env[flag.env] !== '') return process.env[flag.env];
		return flag.default;
	};
	const number = (name: string): number => {
		const value = Number(get(name));
		if (!Number.isFinite(value)) throw new UsageError(`--${name} must be a number, got "${get(name)}"`);
		return value;
	};
	const bool = (name: string) => values[name] === true || /^(1|true|yes)$/i.test(get(name) ?? '');
	return { get, number, bool };
}

class UsageError extends Error {}

// The heavy modules (model runtimes, Chroma's client) load only for the command that needs them, so --help is instant.
async function serve(values: Record<string, string | boolean | undefined>) {
	const { get, number, bool } = read(serveFlags, values);
	const { createJsonLogger } = await import('./json-logger.ts');
	const { createSidecar } = await import('./create-sidecar.ts');
	const logger = createJsonLogger();
	const chroma = chromaOption(get('chroma-url'), get('chroma-path'));
	const threads = number('threads');
	const contextSize = number('context-size');
	let provider: AnswerProvider;
	const providerName = get('provider');
	if (providerName === 'local') {
		const modelPath = await resolveModel(get('model')!, get('models-dir')!);
		const { loadLanguageModel } = await import('./load-language-model.ts');
		provider = await loadLanguageModel({ modelPath, threads, contextSize });
	} else if (providerName === 'openai') {
		const baseUrl = get('base-url');
		const model = get('model-name');
		if (!baseUrl || !model) throw new UsageError('--provider openai needs --base-url and --model-name');
		const keyFile = get('api-key-file');
		const apiKey = keyFile ? readFileSync(keyFile, 'utf8').trim() : process.env.CONCIERGE_API_KEY || undefined;
		const tokenizerPath = get('tokenizer');
		const { loadTokenizer } = await import('./load-tokenizer.ts');
		const { createOpenAiProvider } = await import('./openai-provider.ts');
		const tokenizer = tokenizerPath ? await loadTokenizer({ modelPath: tokenizerPath }) : undefined;
		provider = createOpenAiProvider({ baseUrl, model, contextSize, ...(apiKey ? { apiKey } : {}), ...(tokenizer ? { tokenizer } : {}) });
		const dispose = provider.dispose.bind(provider);
		provider.dispose = async () => {
			await dispose();
			await tokenizer?.dispose();
		};
	} else {
		throw new UsageError(`--provider must be local or openai, got "${providerName}"`);
	}
	// Chosen explicitly, never guessed from which variables happen to be set.
	logger.info('provider', { provider: provider.name });
	const options: SidecarOptions = {
		provider,
		port: number('port'),
		host: get('host')!,
		threads,
		contextSize,
		chroma,
		collection: get('collection')!,
		bundle: get('bundle'),
		embeddingModel: get('embedding-model'),
		site: get('site'),
		origins: (get('origins') ?? '').split(',').map((origin) => origin.trim()).filter(Boolean),
		maxTokens: number('max-tokens'),
		temperature: number('temperature'),
		topK: number('top-k'),
		maxDistance: number('max-distance'),
		queueMax: number('queue-max'),
		queueTimeoutMs: number('queue-timeout') * 1000,
		rateLimit: number('rate-limit'),
		trustProxy: bool('trust-proxy'),
		metricsPublic: bool('metrics-public'),
		qaLog: values['no-qa-log'] ? false : resolve(get('qa-log')!),
		logger,
	};
	const sidecar = await createSidecar(options).catch(async (error) => {
		await provider.dispose();
		throw error;
	});
	const stop = async () => {
		process.off('SIGTERM', stop);
		process.off('SIGINT', stop);
		await sidecar.close();
		await provider.dispose();
		process.exitCode = 0;
	};
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
}

async function ingest(bundle: string | undefined, values: Record<string, string | boolean | undefined>) {
	if (!bundle) throw new UsageError('ingest needs the path of a bundle, e.g. astro-concierge ingest .concierge/bundle.jsonl');
	const { get } = read(ingestFlags, values);
	const chroma = chromaOption(get('chroma-url'), get('chroma-path'));
	const { startChromaServer } = await import('./chroma-server.ts');
	const { connectChroma } = await import('../integration/sync-chroma.ts');
	const { ingestBundle } = await import('./ingest-bundle.ts');
	const server = 'path' in chroma ? await startChromaServer({ path: chroma.path }) : undefined;
	try {
		const client = await connectChroma(server?.url ?? (chroma as { url: string }).url);
		const result = await ingestBundle({ client, collection: get('collection')!, bundle });
		process.stdout.write(
			`Loaded ${bundle} into ${get('collection')}: ${result.upserted} upserted, ${result.deleted} deleted, ${result.unchanged} unchanged (content ${result.contentVersion})\n`,
		);
	} finally {
		await server?.close();
	}
}

function chromaOption(url: string | undefined, path: string | undefined): { url: string } | { path: string } {
	if (url && path) throw new UsageError('give either --chroma-url or --chroma-path, not both');
	if (url) return { url };
	if (path) return { path: resolve(path) };
	throw new UsageError('Chroma is needed: give --chroma-url (or CHROMA_URL) or --chroma-path');
}

/** A GGUF path as is; an hf: URI downloaded once (with a progress bar) into the models folder. */
async function resolveModel(model: string, directory: string): Promise<string> {
	if (!model.startsWith('hf:') && !/^https?:\/\//.test(model)) return resolve(model);
	const { resolveModelFile } = await import('node-llama-cpp');
	try {
		return await resolveModelFile(model, { directory, cli: true });
	} catch (error) {
		throw new Error(`could not download the model ${model} into ${directory}: ${(error as Error).message}`, { cause: error });
	}
}

async function main(argv: string[]): Promise<number> {
	const [command = 'help', ...rest] = argv;
	if (command === 'version' || command === '--version' || command === '-v') {
		process.stdout.write(`${PACKAGE_VERSION}\n`);
		return 0;
	}
	if (command === 'help' || command === '--help' || command === '-h') {
		process.stdout.write(usage);
		return 0;
	}
	const flags = command === 'serve' ? serveFlags : command === 'ingest' ? ingestFlags : undefined;
	if (!flags) throw new UsageError(`unknown command '${command}'`);
	const parsed = parseArgs({
		args: rest,
		allowPositionals: command === 'ingest',
		options: { ...Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, { type: flag.type }])), help: { type: 'boolean', short: 'h' } },
	});
	if (parsed.values.help) {
		process.stdout.write(usage);
		return 0;
	}
	if (command === 'serve') await serve(parsed.values);
	else await ingest(parsed.positionals[0], parsed.values);
	return 0;
}

main(process.argv.slice(2)).then(
	(code) => {
		process.exitCode = code;
	},
	(error: Error) => {
		const isUsage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
		process.stderr.write(`astro-concierge: ${error.message}\n${isUsage ? `\n${usage}` : ''}`);
		process.exitCode = isUsage ? 2 : 1;
	},
);
