import { createRequire } from 'node:module';

/** This package's version. A self-reference finds the manifest both from the sources and from the published dist/ files. */
export const PACKAGE_VERSION = (createRequire(import.meta.url)('astro-concierge/package.json') as { version: string }).version;
