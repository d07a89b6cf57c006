import { BUNDLE_FORMAT, BUNDLE_VERSION, type BundleHeader } from '../../integration/bundle.ts';
import { E5_PASSAGE_PREFIX, E5_QUERY_PREFIX } from '../../integration/runtime/e5.ts';

/** The header a build with the tiny e5 model (q8) writes; tests give what differs between their bundles. */
export function bundleHeader(settings: Pick<BundleHeader, 'dimension' | 'contentVersion' | 'chunks'> & Partial<BundleHeader>): BundleHeader {
	return {
		format: BUNDLE_FORMAT,
		version: BUNDLE_VERSION,
		model: 'tiny-e5',
		dtype: 'q8',
		pooling: 'mean',
		normalize: true,
		passagePrefix: E5_PASSAGE_PREFIX,
		queryPrefix: E5_QUERY_PREFIX,
		topK: 3,
		maxDistance: 0.2,
		...settings,
	};
}
