#!/usr/bin/env node
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const usage = `Usage: astro-concierge <command> [options]

The astro-concierge sidecar: answers questions about an Astro site's articles.

Commands:
  help       Show this help.
  version    Print the installed version.

Options:
  -h, --help       Show this help.
  -v, --version    Print the installed version.
`;

function version(): string {
	// A self-reference finds the manifest both from the sources and from the published dist/ files.
	const pkg = createRequire(import.meta.url)('astro-concierge/package.json') as { version: string };
	return pkg.version;
}

function main(argv: string[]): number {
	let parsed;
	try {
		parsed = parseArgs({
			args: argv,
			allowPositionals: true,
			options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
		});
	} catch (error) {
		process.stderr.write(`astro-concierge: ${(error as Error).message}\n\n${usage}`);
		return 2;
	}
	const [command = 'help'] = parsed.positionals;
	if (parsed.values.version || command === 'version') {
		process.stdout.write(`${version()}\n`);
		return 0;
	}
	if (parsed.values.help || command === 'help') {
		process.stdout.write(usage);
		return 0;
	}
	process.stderr.write(`astro-concierge: unknown command '${command}'\n\n${usage}`);
	return 2;
}

process.exitCode = main(process.argv.slice(2));
