import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import concierge from '../../integration/index.ts';
import { parseOptions } from '../../integration/options.ts';

describe('integration options', () => {
	test('fill in the documented defaults', () => {
		assert.deepEqual(parseOptions(undefined), { model: 'Xenova/multilingual-e5-small', dtype: 'q8' });
	});

	test('refuse an unknown option when the integration is created, naming it', () => {
		assert.throws(() => concierge({ modle: 'x' } as never), (error: Error & { hint?: string }) => {
			assert.match(error.message, /Invalid astro-concierge options/);
			assert.match(error.message, /modle/);
			assert.match(error.hint ?? '', /astro\.config\.mjs/);
			return true;
		});
	});

	test('refuse a wrong value, naming the option and the values it accepts', () => {
		assert.throws(() => parseOptions({ dtype: 'q7' }), /dtype: .*"fp32".*"q8"/s);
		assert.throws(() => parseOptions({ model: '' }), /model: /);
	});
});
