import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve, sep } from 'node:path';
import { contentTypeOf } from '../integration/content-type.ts';

/** Answers a request from the site's files; false when no file matches, so the caller can answer 404. */
export type StaticSiteHandler = (request: IncomingMessage, response: ServerResponse) => Promise<boolean>;

/**
 * Serves a built Astro site's public files: `dist/client/` when the build used a server adapter (every page
 * prerendered), else `dist/`. A folder URL is answered with its index.html, `/page` with `page.html` or
 * `page/index.html`; nothing outside the folder is ever read. Astro's hashed assets are cached for a year.
 */
export function serveStaticSite(dist: string): StaticSiteHandler {
	const client = join(dist, 'client');
	const root = resolve(existsSync(client) ? client : dist);
	if (!existsSync(join(root, 'index.html')) && !existsSync(join(root, '404.html'))) {
		throw new Error(`${dist} does not look like a built site (no index.html in ${root}); run astro build first`);
	}
	const find = async (path: string): Promise<string | undefined> => {
		for (const candidate of path.endsWith('/') ? [`${path}index.html`] : [path, `${path}.html`, `${path}/index.html`]) {
			const file = resolve(root, `.${candidate}`);
			if (file !== root && !file.startsWith(root + sep)) return undefined;
			if ((await stat(file).catch(() => undefined))?.isFile()) return file;
		}
		return undefined;
	};
	return async (request, response) => {
		if (request.method !== 'GET' && request.method !== 'HEAD') return false;
		let path: string;
		try {
			path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
		} catch {
			return false;
		}
		if (path.includes('\0')) return false;
		const file = await find(path);
		const status = file ? 200 : 404;
		const body = file ?? (await find('/404'));
		if (!body) return false;
		const info = await stat(body);
		response.writeHead(status, {
			'content-type': contentTypeOf(body),
			'content-length': info.size,
			'x-content-type-options': 'nosniff',
			'cache-control': path.startsWith('/_astro/') ? 'public, max-age=31536000, immutable' : 'no-cache',
		});
		if (request.method === 'HEAD') response.end();
		else createReadStream(body).pipe(response);
		return true;
	};
}
