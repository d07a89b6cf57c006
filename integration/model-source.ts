import { existsSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { ConciergeOptions } from './options.ts';

/** Where the embedding model comes from, for the build's embedder and for the copy the browser loads. */
export interface ModelSource {
	/** The name kb.json and the bundle carry, and the model's folder under the island's `modelsUrl`: never a path of the build machine. */
	name: string;
	/** What createEmbedder loads: the absolute folder of a local model, or the Hub id. */
	model: string;
	/** Where Transformers.js keeps Hub downloads. */
	cacheDir: string;
	/** The folder holding the model's files in Hugging Face's layout: the local folder, or the Hub download's place in `cacheDir`. */
	folder: string;
}

/** A path, or a name that is a folder under the project root (`models/e5`), is a local model; anything else a Hub id. */
export function isLocalModel(model: string, root: string): boolean {
	return isAbsolute(model) || model.startsWith('./') || model.startsWith('../') || existsSync(resolve(root, model));
}

export function modelSource(options: Pick<ConciergeOptions, 'model' | 'cacheDir'>, root: string): ModelSource {
	const cacheDir = resolve(root, options.cacheDir, 'models');
	if (isLocalModel(options.model, root)) {
		const folder = resolve(root, options.model);
		return { name: basename(folder), model: folder, cacheDir, folder };
	}
	// Transformers.js' file cache keeps a Hub file at `<cacheDir>/<model id>/<file>` (main revision).
	return { name: options.model, model: options.model, cacheDir, folder: join(cacheDir, options.model) };
}
