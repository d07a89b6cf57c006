import { extname } from 'node:path';

// The types of what a built Astro site and the concierge's files hold; one table for the dev server and the sidecar.
const contentTypes: Record<string, string> = {
	'.html': 'text/html; charset=utf-8',
	'.css': 'text/css; charset=utf-8',
	'.js': 'text/javascript; charset=utf-8',
	'.mjs': 'text/javascript; charset=utf-8',
	'.json': 'application/json; charset=utf-8',
	'.txt': 'text/plain; charset=utf-8',
	'.xml': 'application/xml; charset=utf-8',
	'.svg': 'image/svg+xml',
	'.png': 'image/png',
	'.jpg': 'image/jpeg',
	'.jpeg': 'image/jpeg',
	'.gif': 'image/gif',
	'.webp': 'image/webp',
	'.avif': 'image/avif',
	'.ico': 'image/x-icon',
	'.woff': 'font/woff',
	'.woff2': 'font/woff2',
	'.wasm': 'application/wasm',
	'.onnx': 'application/octet-stream',
	'.webmanifest': 'application/manifest+json',
};

/** The Content-Type to answer a file with, by its extension; unknown ones are sent as bytes. */
export function contentTypeOf(path: string): string {
	return contentTypes[extname(path).toLowerCase()] ?? 'application/octet-stream';
}
