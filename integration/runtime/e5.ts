// Browser-safe: imported by the search UI as well as the build, so no node: imports here.

/** Prefix e5 models expect before every document chunk that gets indexed. */
export const E5_PASSAGE_PREFIX = 'passage: ';

/** Prefix e5 models expect before every search question. */
export const E5_QUERY_PREFIX = 'query: ';
