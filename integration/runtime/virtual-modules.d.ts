// Modules the integration's Vite plugin provides at build and dev time.

declare module 'virtual:astro-concierge/search-worker' {
	/** The island's search worker (search-worker.ts), bundled by Vite as a worker entry. */
	const SearchWorker: new () => Worker;
	export default SearchWorker;
}
