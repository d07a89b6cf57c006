// Browser-safe: what the integration hands the island through `virtual:astro-concierge/config`.

/** UI languages the island speaks. */
export const ISLAND_LANGUAGES = ['en', 'ja'] as const;
export type IslandLanguage = (typeof ISLAND_LANGUAGES)[number];

/**
 * Where the island finds its files, under the site's own origin unless the owner chose otherwise:
 *
 * - `${assetsUrl}kb.json`: the knowledge base (docs/kb-format.md)
 * - `${assetsUrl}runtime/`: Transformers.js (`transformers.min.js`) and onnxruntime-web's wasm and glue files
 * - `${modelsUrl}<kb.json model>/`: the embedding model's files in Hugging Face's layout
 *   (`config.json`, `tokenizer.json`, `tokenizer_config.json`, `onnx/model<dtype suffix>.onnx`)
 */
export interface IslandConfig {
	/** Folder URL of the concierge's public files, ending in `/`: `<base>concierge/`. */
	assetsUrl: string;
	/** Folder URL the model folders live under, ending in `/`: `${assetsUrl}models/`, or the `modelHost` option. */
	modelsUrl: string;
	/** WebSocket URL of the sidecar, or a path on the page's own origin; `null` when answers are off (search only). */
	endpoint: string | null;
	/** Load the runtime, model and kb.json when the browser is idle instead of on first open. */
	prefetch: boolean;
	/** UI language, or `null` to follow the page's `<html lang>`. */
	lang: IslandLanguage | null;
	/** Example questions offered in an empty conversation, per UI language. */
	suggestions: Record<IslandLanguage, string[]>;
	/** Key that opens the concierge together with Ctrl (or ⌘ on Apple devices), e.g. `k`; `null` for none. */
	shortcut: string | null;
	/** True under `astro dev`, where kb.json is the last build's copy and may be missing. */
	dev: boolean;
}

/** Attribute on any element of a page that must not show the floating launcher (`concierge: { launcher: false }`). */
export const LAUNCHER_OFF_ATTRIBUTE = 'data-concierge-launcher';

/** The custom element's tag: the floating launcher, or where `<Concierge />` placed it. */
export const ISLAND_TAG = 'astro-concierge';
