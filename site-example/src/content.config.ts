import { defineCollection } from 'astro:content';
import { glob } from 'astro/loaders';
import { z } from 'astro/zod';

const blog = defineCollection({
	loader: glob({ pattern: '**/*.{md,mdx}', base: './site-example/src/content/blog' }),
	schema: z.object({
		title: z.string(),
		description: z.string(),
		date: z.coerce.date(),
		lang: z.enum(['en', 'ja']),
		/** Drafts are neither built nor listed (and the concierge skips them). */
		draft: z.boolean().default(false),
		/** Read by astro-concierge: `false` keeps an article out of the knowledge base. */
		concierge: z
			.union([z.boolean(), z.object({ index: z.boolean().optional(), launcher: z.boolean().optional() })])
			.optional(),
	}),
});

export const collections = { blog };
