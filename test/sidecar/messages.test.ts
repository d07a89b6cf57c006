import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { noContextMessage, truncatedNotice } from '../../sidecar/messages.ts';

describe('sidecar messages', () => {
	test('say that no article matched in the question’s language', () => {
		assert.equal(noContextMessage('ja'), '該当する記事が見つかりませんでした。');
		assert.match(noContextMessage('en'), /^No article/);
	});

	test('say that the answer was cut short in the question’s language', () => {
		assert.equal(truncatedNotice('ja'), '（※ 回答が長くなったため省略されました）');
		assert.equal(truncatedNotice('en'), '(The answer was cut short because it grew too long.)');
	});
});
