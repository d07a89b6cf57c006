import { stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { AstroIntegrationLogger } from 'astro';
import { AstroError } from 'astro/errors';
import { MODELS_FOLDER, modelFiles, RUNTIME_FOLDER, runtimeFiles } from './island-files.ts';
import type { ConciergeOptions } from './options.ts';
import { copyFileAtomic } from './write-file-atomic.ts';

/** What went into the build output. */
export interface CopyReport {
	runtime: { files: number; bytes: number };
	/** Absent when the model is served from the `modelHost` option. */
	model?: { name: string; files: number; bytes: number };
}

/**
 * Copies the island's search runtime and, unless `modelHost` serves it, the embedding model into the build
 * output, so the site serves everything its visitors' browsers load from its own origin.
 */
export async function copyIslandAssets(
	options: ConciergeOptions,
	context: { root: string; publicDir: string; logger: AstroIntegrationLogger },
): Promise<CopyReport> {
	const { root, publicDir, logger } = context;
	const runtimeDir = join(publicDir, RUNTIME_FOLDER);
	const runtime = await copyAll([...runtimeFiles()].map(([name, source]) => ({ source, target: join(runtimeDir, name) })));
	logger.info(`copied ${runtime.files} runtime files (${runtime.bytes} bytes) to ${relative(root, runtimeDir)}/`);
	if (options.modelHost) {
		logger.info(`model files are not copied: the island loads them from ${options.modelHost}`);
		return { runtime };
	}
	const model = modelFiles(options, root);
	const modelDir = join(publicDir, MODELS_FOLDER, model.name);
	const copied = await copyAll(model.files.map((file) => ({ source: join(model.folder, file), target: join(modelDir, file) })));
	logger.info(`copied ${copied.files} files of model ${model.name} (${copied.bytes} bytes) to ${relative(root, modelDir)}/`);
	return { runtime, model: { name: model.name, ...copied } };
}

async function copyAll(files: { source: string; target: string }[]): Promise<{ files: number; bytes: number }> {
	let bytes = 0;
	// Every source is checked before anything is copied, so a missing file leaves no half-copied model behind.
	for (const { source } of files) {
		const info = await stat(source).catch(() => undefined);
		if (!info?.isFile()) {
			throw new AstroError(
				`astro-concierge: ${source} is missing, and the browser cannot search without it`,
				'Check the model option (a local folder needs the files Transformers.js loads), or reinstall astro-concierge if the missing file is part of its runtime.',
			);
		}
		bytes += info.size;
	}
	// A server already serving the output sees each old file or its new one, never a part.
	for (const { source, target } of files) await copyFileAtomic(source, target);
	return { files: files.length, bytes };
}
