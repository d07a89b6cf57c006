import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAnswer, type AnswerBlock, type AnswerInline } from '../../../integration/runtime/render-answer.ts';

const text = (value: string): AnswerInline => ({ type: 'text', text: value });
const strong = (...content: AnswerInline[]): AnswerInline => ({ type: 'strong', content });
const em = (...content: AnswerInline[]): AnswerInline => ({ type: 'em', content });
const cite = (n: number): AnswerInline => ({ type: 'cite', n });
const paragraph = (...content: AnswerInline[]): AnswerBlock => ({ type: 'paragraph', content });

/** The inline content of an answer that is a single paragraph. */
function inline(answer: string): AnswerInline[] {
	const blocks = parseAnswer(answer);
	assert.equal(blocks.length, 1, JSON.stringify(blocks));
	assert.equal(blocks[0]!.type, 'paragraph');
	return (blocks[0] as { content: AnswerInline[] }).content;
}

describe('parseAnswer blocks', () => {
	test('splits paragraphs at blank lines and turns single newlines into line breaks', () => {
		assert.deepEqual(parseAnswer('一行目\n二行目\n\n\r\n次の段落'), [
			paragraph(text('一行目'), { type: 'break' }, text('二行目')),
			paragraph(text('次の段落')),
		]);
	});

	test('reads -, * and ・ bullets as one unordered list, even right after a paragraph line', () => {
		assert.deepEqual(parseAnswer('候補:\n- 一つ目\n* two\n・三つ目'), [
			paragraph(text('候補:')),
			{ type: 'list', ordered: false, start: 1, items: [[text('一つ目')], [text('two')], [text('三つ目')]] },
		]);
	});

	test('reads 1. and 1) items as an ordered list that keeps its first number', () => {
		assert.deepEqual(parseAnswer('3. three\n4) four'), [
			{ type: 'list', ordered: true, start: 3, items: [[text('three')], [text('four')]] },
		]);
	});

	test('continues a list item on indented lines and ends the list at an unindented one', () => {
		assert.deepEqual(parseAnswer('1. **Astro**\n   静的サイト\nまとめ'), [
			{ type: 'list', ordered: true, start: 1, items: [[strong(text('Astro')), { type: 'break' }, text('静的サイト')]] },
			paragraph(text('まとめ')),
		]);
	});

	test('starts a new list when bullets switch to numbers', () => {
		const blocks = parseAnswer('- a\n1. b');
		assert.deepEqual(
			blocks.map((block) => block.type === 'list' && block.ordered),
			[false, true],
		);
	});

	test('keeps a fenced code block verbatim with its language', () => {
		assert.deepEqual(parseAnswer('前\n```ts\nconst a = **b** [1];\n\n<b>x</b>\n```\n後'), [
			paragraph(text('前')),
			{ type: 'code', language: 'ts', text: 'const a = **b** [1];\n\n<b>x</b>' },
			paragraph(text('後')),
		]);
	});

	test('treats a fence that has not closed yet as a code block running to the end', () => {
		assert.deepEqual(parseAnswer('```\nnpm install astro'), [{ type: 'code', language: '', text: 'npm install astro' }]);
	});

	test('renders #, ## and ### headings as strong paragraphs and drops horizontal rules', () => {
		assert.deepEqual(parseAnswer('# 概要\n本文\n---\n### Next **step**'), [
			paragraph(strong(text('概要'))),
			paragraph(text('本文')),
			paragraph(strong(text('Next '), strong(text('step')))),
		]);
	});

	test('shows nothing for a heading marker whose words have not streamed in yet', () => {
		assert.deepEqual(parseAnswer('本文\n\n##'), [paragraph(text('本文'))]);
	});
});

describe('parseAnswer inline', () => {
	test('reads **bold**, *em*, _em_ and `code`', () => {
		assert.deepEqual(inline('**a** *b* _c_ `d *e*`'), [
			strong(text('a')),
			text(' '),
			em(text('b')),
			text(' '),
			em(text('c')),
			text(' '),
			{ type: 'code', text: 'd *e*' },
		]);
	});

	test('puts emphasis right against Japanese text and punctuation', () => {
		assert.deepEqual(inline('これは**重要**です。「*強調*」、_注意_。'), [
			text('これは'),
			strong(text('重要')),
			text('です。「'),
			em(text('強調')),
			text('」、'),
			em(text('注意')),
			text('。'),
		]);
	});

	test('leaves intraword markers in identifiers and arithmetic literal', () => {
		assert.deepEqual(inline('snake_case_words と 2*3*4、a * b * c'), [text('snake_case_words と 2*3*4、a * b * c')]);
	});

	test('nests bold inside emphasis', () => {
		assert.deepEqual(inline('*a **b** c*'), [em(text('a '), strong(text('b')), text(' c'))]);
	});

	test('reads [n], [1][2], [1, 2], [1、2] and full-width ［n］ as citations', () => {
		assert.deepEqual(inline('A[1][2] B[1, 2] C[3、4] D［5］'), [
			text('A'),
			cite(1),
			cite(2),
			text(' B'),
			cite(1),
			cite(2),
			text(' C'),
			cite(3),
			cite(4),
			text(' D'),
			cite(5),
		]);
	});

	test('leaves brackets that are not positive integers literal', () => {
		assert.deepEqual(inline('[0] [x] [1.5] [-1]'), [text('[0] [x] [1.5] [-1]')]);
	});

	test('leaves HTML, links and images as literal text around citations', () => {
		assert.deepEqual(inline('<b>x</b> <img src=x onerror="alert(1)"> [1](javascript:alert(1)) ![a](b)'), [
			text('<b>x</b> <img src=x onerror="alert(1)"> '),
			cite(1),
			text('(javascript:alert(1)) ![a](b)'),
		]);
	});
});

describe('parseAnswer mid-stream', () => {
	test('bolds an unclosed ** to the end of the text still streaming', () => {
		assert.deepEqual(inline('これは**重要な'), [text('これは'), strong(text('重要な'))]);
	});

	test('hides a ** that has nothing after it yet', () => {
		assert.deepEqual(inline('これは**'), [text('これは')]);
	});

	test('leaves an unclosed ** literal once its paragraph has ended', () => {
		assert.deepEqual(parseAnswer('これは**重要\n\n次'), [paragraph(text('これは**重要')), paragraph(text('次'))]);
	});

	test('runs an unclosed `code` span to the end of the text still streaming', () => {
		assert.deepEqual(inline('run `npm i'), [text('run '), { type: 'code', text: 'npm i' }]);
	});

	test('holds back a citation whose closing bracket has not arrived', () => {
		assert.deepEqual(inline('詳しくは[1, 2'), [text('詳しくは')]);
		assert.deepEqual(inline('詳しくは［'), [text('詳しくは')]);
	});

	test('holds back a half-written citation only in the last item of the last block', () => {
		assert.deepEqual(parseAnswer('- a [1\n- b [2'), [
			{ type: 'list', ordered: false, start: 1, items: [[text('a [1')], [text('b ')]] },
		]);
	});

	test('leaves an unclosed single * literal, since it may be a plain asterisk', () => {
		assert.deepEqual(inline('注*あり'), [text('注*あり')]);
	});
});
