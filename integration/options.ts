import { AstroError } from 'astro/errors';
import { z } from 'astro/zod';

/** Every option of the integration, with its default. Unknown keys are refused so a typo fails the build at once. */
export const optionsSchema = z
	.object({
		/**
		 * Embedding model: a Hugging Face model id, or a path to a local model folder (relative to the project root).
		 * The browser loads exactly this model, so the build and the visitor's query produce comparable vectors.
		 * @default 'Xenova/multilingual-e5-small'
		 */
		model: z.string().min(1).default('Xenova/multilingual-e5-small'),
		/**
		 * Weight precision of the embedding model, written into kb.json for the browser.
		 * `q8` is what the browser loads fastest; the build must use the same.
		 * @default 'q8'
		 */
		dtype: z.enum(['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'bnb4', 'q4f16']).default('q8'),
	})
	.strict();

/** Options as a user writes them in astro.config.mjs. */
export type ConciergeUserOptions = z.input<typeof optionsSchema>;
/** Options after defaults are applied. */
export type ConciergeOptions = z.output<typeof optionsSchema>;

/** Validates user options, throwing an Astro error that names each wrong option and what it expects. */
export function parseOptions(input: unknown): ConciergeOptions {
	const result = optionsSchema.safeParse(input ?? {});
	if (result.success) return result.data;
	const problems = result.error.issues.map((issue) => {
		const where = issue.path.length ? issue.path.join('.') : 'options';
		return `- ${where}: ${issue.message}`;
	});
	throw new AstroError(
		`Invalid astro-concierge options:\n${problems.join('\n')}`,
		'Check the options passed to concierge() in astro.config.mjs; the README lists each option with its type and default.',
	);
}
