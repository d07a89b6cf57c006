import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, relative, resolve } from 'node:path';
import { lastKbPath } from './build-knowledge-base.ts';
import { contentTypeOf } from './content-type.ts';
import { ASSETS_FOLDER, MODELS_FOLDER, modelFiles, RUNTIME_FOLDER, runtimeFiles } from './island-files.ts';
import type { ConciergeOptions } from './options.ts';

type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;

/**
 * Serves, under `astro dev`, the URLs the build writes: kb.json from the last good build's copy beside the bundle,
 * the runtime files from node_modules and the model files from the model's folder or the build's download cache.
 * Only the listed files are served, never a path taken from the request, so nothing else is reachable.
 */
export function serveIslandFiles(options: ConciergeOptions, root: string): Middleware {
	// Astro's dev server takes the site's base off request URLs before integrations' middleware sees them.
	const prefix = `/${ASSETS_FOLDER}`;
	const kbPath = lastKbPath(resolve(root, options.bundle));
	const runtime = runtimeFiles();
	const runtimePrefix = RUNTIME_FOLDER.slice(ASSETS_FOLDER.length);
	const modelsPrefix = MODELS_FOLDER.slice(ASSETS_FOLDER.length);

	// The source of a public path inside the concierge folder: a file, or undefined when it is none of ours.
	const locate = (inside: string): string | undefined => {
		if (inside === 'kb.json') return kbPath;
		if (inside.startsWith(runtimePrefix)) return runtime.get(inside.slice(runtimePrefix.length));
		if (inside.startsWith(modelsPrefix) && !options.modelHost) {
			const model = modelFiles(options, root);
			const file = inside.slice(modelsPrefix.length + model.name.length + 1);
			if (inside.startsWith(`${modelsPrefix}${model.name}/`) && model.files.includes(file)) return join(model.folder, file);
		}
		return undefined;
	};

	return (request, response, next) => {
		if (request.method !== 'GET' && request.method !== 'HEAD') return next();
		let pathname: string;
		try {
			pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
		} catch {
			return next();
		}
		if (!pathname.startsWith(prefix)) return next();
		const inside = pathname.slice(prefix.length);
		const file = locate(inside);
		if (file === undefined) {
			// Anything else in the concierge folder (a file in the site's public/concierge/) is Astro's to serve.
			if (!inside.startsWith(runtimePrefix) && !inside.startsWith(modelsPrefix)) return next();
			return sendJson(response, 404, { error: 'not_found', message: `${pathname} is not a file of the concierge` });
		}
		void send(request, response, file, inside === 'kb.json' ? relative(root, file) : undefined);
	};
}

/** `kb` is kb.json's path for messages, when the file is kb.json. */
async function send(request: IncomingMessage, response: ServerResponse, file: string, kb: string | undefined): Promise<void> {
	const info = await stat(file).catch(() => undefined);
	if (!info?.isFile()) {
		// The island shows this message: before the first build there is no knowledge base to search.
		if (kb !== undefined) {
			return sendJson(response, 404, {
				error: 'no_kb',
				message: `run astro build once to make the knowledge base; astro dev serves the last build's copy, ${kb}`,
			});
		}
		return sendJson(response, 404, { error: 'not_found', message: `${file} is missing; run astro build once so the model is downloaded` });
	}
	response.writeHead(200, {
		'content-type': contentTypeOf(file),
		'content-length': info.size,
		// A rebuild replaces kb.json and a changed model replaces its files under the same names.
		'cache-control': 'no-cache',
	});
	if (request.method === 'HEAD') return void response.end();
	createReadStream(file)
		.on('error', (error) => response.destroy(error))
		.pipe(response);
}

function sendJson(response: ServerResponse, status: number, body: { error: string; message: string }): void {
	const text = JSON.stringify(body);
	response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
}
