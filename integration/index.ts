import type { AstroIntegration } from 'astro';
import { parseOptions, type ConciergeUserOptions } from './options.ts';

export type { ConciergeOptions, ConciergeUserOptions } from './options.ts';

/** The astro-concierge integration: `integrations: [concierge()]` in astro.config.mjs. */
export default function concierge(userOptions?: ConciergeUserOptions): AstroIntegration {
	const options = parseOptions(userOptions);
	return {
		name: 'astro-concierge',
		hooks: {
			'astro:build:done': ({ logger }) => {
				logger.info(`embedding model ${options.model} (${options.dtype})`);
			},
		},
	};
}
