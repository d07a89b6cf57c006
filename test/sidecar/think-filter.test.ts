import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createThinkFilter, type ThinkFilterOptions } from '../../sidecar/think-filter.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

function filter(chunks: readonly string[], options?: ThinkFilterOptions): string {
	const think = createThinkFilter(options);
	let out = '';
	for (const chunk of chunks) out += think.push(chunk);
	return out + think.end();
}

function everySplit(text: string): string[][] {
	const splits: string[][] = [[text], [...text]];
	for (let first = 0; first <= text.length; first++) {
		for (let second = first; second <= text.length; second++) {
			splits.push([text.slice(0, first), text.slice(first, second), text.slice(second)]);
		}
	}
	return splits;
}

const SAMPLE = '<think>\nThe user asks about <b>tags</b> & </thin.\n</think>\n\nUse <th> cells [1].<think>again</think> Done <';

describe('createThinkFilter', () => {
	test('gives the same output for every split of a stream into chunks', () => {
		const expected = 'Use <th> cells [1]. Done <';
		for (const chunks of everySplit(SAMPLE)) assert.equal(filter(chunks), expected, JSON.stringify(chunks));
	});

	test('gives the same output for random splits', () => {
		const random = seededRandom(7);
		for (let round = 0; round < 500; round++) {
			const chunks: string[] = [];
			for (let index = 0; index < SAMPLE.length; ) {
				const length = Math.floor(random() * 10);
				chunks.push(SAMPLE.slice(index, index + length));
				index += length;
			}
			assert.equal(filter(chunks), 'Use <th> cells [1]. Done <');
		}
	});

	test('removes a tag split right after <th', () => {
		assert.equal(filter(['<th', 'ink>secret</th', 'ink>Answer']), 'Answer');
	});

	test('removes several think blocks', () => {
		assert.equal(filter(['A<think>x</think>B<think>y</think>C']), 'ABC');
	});

	test('drops everything up to the first </think> when the template opened the thought', () => {
		assert.equal(filter(['I should', ' check [1].</th', 'ink>\n\nSee [1].'], { startsInside: true }), 'See [1].');
		assert.equal(filter(['still thinking'], { startsInside: true }), '');
	});

	test('emits nothing of an unterminated thought', () => {
		assert.equal(filter(['Answer.', '<think>never ', 'closed </thi']), 'Answer.');
	});

	test('passes <thinking> and <th> through as text', () => {
		assert.equal(filter(['<thinking>', ' and <th>x</th> and </thinking>']), '<thinking> and <th>x</th> and </thinking>');
	});

	test('holds back what may be the start of a tag and releases it at the end', () => {
		const think = createThinkFilter();
		assert.equal(think.push('a <th'), 'a ');
		assert.equal(think.push('e'), '<the');
		assert.equal(think.push(' </thi'), ' ');
		assert.equal(think.end(), '</thi');
	});

	test('trims whitespace at the start of the answer but not inside it', () => {
		assert.equal(filter(['<think>x</think>', '\n', ' \n', 'Hi\n\n', '<think>y</think>', ' there']), 'Hi\n\n there');
	});

	test('drops a stray </think> and, while nothing is shown yet, the text before it', () => {
		assert.equal(filter(['</think>\n\nAnswer']), 'Answer');
		assert.equal(filter(['Hmm, let me see.</think>Answer']), 'Answer');
		// Text already emitted cannot be recalled; only the tag goes.
		assert.equal(filter(['Shown. ', 'More</think> end']), 'Shown. More end');
	});
});
