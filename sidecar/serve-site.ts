import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveStaticSite, type StaticSiteHandler } from './serve-static-site.ts';

/** What @astrojs/node's server entry exports: a standalone `(req, res)` handler, or a middleware `(req, res, next)`. */
interface NodeAdapterEntry {
	handler: (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void;
	options?: { mode?: string };
}

/**
 * Serves a built Astro site: through @astrojs/node's own handler when the build has a server entry
 * (`dist/server/entry.mjs`), so on-demand pages render too, else as static files. Either way the concierge's
 * files (kb.json, runtime, model) are among the site's public files.
 */
export async function serveSite(dist: string): Promise<StaticSiteHandler> {
	const entry = resolve(join(dist, 'server', 'entry.mjs'));
	if (!existsSync(entry)) return serveStaticSite(dist);

	// The standalone entry starts its own server on import unless told not to; the sidecar's server is the one.
	const previous = process.env.ASTRO_NODE_AUTOSTART;
	process.env.ASTRO_NODE_AUTOSTART = 'disabled';
	let module: NodeAdapterEntry;
	try {
		module = (await import(pathToFileURL(entry).href)) as NodeAdapterEntry;
	} catch (error) {
		throw new Error(`could not load the site's server entry ${entry}: ${(error as Error).message}`, { cause: error });
	} finally {
		if (previous === undefined) delete process.env.ASTRO_NODE_AUTOSTART;
		else process.env.ASTRO_NODE_AUTOSTART = previous;
	}
	if (typeof module.handler !== 'function') {
		throw new Error(`${entry} exports no handler; build the site with the @astrojs/node adapter`);
	}
	const { handler } = module;
	// Standalone mode answers every request itself (its own 404 page included); middleware mode calls next() for
	// what it does not serve, which the sidecar then answers.
	return (request, response) =>
		new Promise<boolean>((done, fail) => {
			response.once('finish', () => done(true));
			response.once('close', () => done(true));
			try {
				handler(request, response, (error?: unknown) => (error ? fail(error) : done(false)));
			} catch (error) {
				fail(error);
			}
		});
}
