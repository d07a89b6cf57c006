import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const types: Record<string, string> = {
	'.html': 'text/html; charset=utf-8',
	'.js': 'text/javascript',
	'.mjs': 'text/javascript',
	'.json': 'application/json',
	'.wasm': 'application/wasm',
	'.onnx': 'application/octet-stream',
	'.css': 'text/css',
};

/** A static file server on 127.0.0.1 and a free port, for pages the browser tests open. */
export interface StaticServer {
	url: string;
	/** Paths requested so far, to check what a page loaded. */
	requests: string[];
	close(): Promise<void>;
}

/**
 * Serves folders under URL prefixes, e.g. `{ '/': pageDir, '/ort/': ortDir }`; the longest prefix wins.
 * Anything else is a 404, so a page that reaches for a missing file fails visibly. `headers` go on every file.
 */
export async function startStaticServer(mounts: Record<string, string>, headers: Record<string, string> = {}): Promise<StaticServer> {
	const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
	const requests: string[] = [];
	const server: Server = createServer(async (request, response) => {
		const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
		requests.push(path);
		const prefix = prefixes.find((candidate) => path.startsWith(candidate));
		const base = prefix === undefined ? undefined : mounts[prefix];
		let file = base && normalize(join(base, path.slice(prefix!.length)));
		if (file && !(file + sep).startsWith(normalize(base + sep))) file = undefined;
		try {
			if (!file) throw new Error('outside every mount');
			let info = await stat(file);
			if (info.isDirectory()) {
				file = join(file, 'index.html');
				info = await stat(file);
			}
			response.writeHead(200, {
				...headers,
				'content-type': types[extname(file)] ?? 'application/octet-stream',
				'content-length': info.size,
			});
			createReadStream(file).pipe(response);
		} catch {
			response.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}`);
		}
	});
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		close: async () => {
			server.closeAllConnections();
			server.close();
			await once(server, 'close');
		},
	};
}
