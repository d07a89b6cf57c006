import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CountTokens } from '../../integration/split-text.ts';
import { buildPrompt, type PromptContext } from '../../sidecar/build-prompt.ts';
import { fitContexts, type FitContextsOptions } from '../../sidecar/fit-contexts.ts';
import type { ChatMessage } from '../../sidecar/answer-provider.ts';
import { fakeCountTokens } from '../helpers/fake-tokenizer.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const countTokens: CountTokens = fakeCountTokens;
const MESSAGE_OVERHEAD = 4;
const countPromptTokens = (messages: ChatMessage[]): number =>
	messages.reduce((sum, message) => sum + countTokens(message.content) + MESSAGE_OVERHEAD, 0);

interface Ranked extends PromptContext {
	rank: number;
}

const question = 'How do I deploy an Astro site?';

function context(rank: number, text: string): Ranked {
	return { rank, title: `Article ${rank}`, url: `https://example.com/${rank}/`, text };
}

function words(count: number, random = seededRandom(count)): string {
	const vocabulary = ['astro', 'build', 'island', 'deploy', 'static', 'page', 'the', 'a', 'server', 'markdown'];
	const out: string[] = [];
	for (let index = 0; index < count; index++) {
		out.push(vocabulary[Math.floor(random() * vocabulary.length)]!);
		if (index % 12 === 11) out.push('.');
	}
	return out.join(' ');
}

function fit(contexts: readonly Ranked[], budget: number, extra: Partial<FitContextsOptions<Ranked>> = {}) {
	return fitContexts({ question, lang: 'en', contexts, budget, countPromptTokens, countTokens, ...extra });
}

function promptOf(contexts: readonly PromptContext[], lang: 'ja' | 'en' = 'en'): number {
	return countPromptTokens(buildPrompt(question, contexts, lang));
}

const emptyPrompt = promptOf([]);

describe('fitContexts', () => {
	test('keeps every context in rank order when all fit', () => {
		const contexts = [context(1, words(40)), context(2, words(30)), context(3, words(20))];
		const result = fit(contexts, 2000);
		assert.deepEqual(result.contexts, contexts);
		assert.equal(result.contexts[0], contexts[0]);
		assert.equal(result.trimmed, false);
		assert.equal(result.promptTokens, promptOf(contexts));
	});

	test('trims the first context that does not fit and adds nothing after it', () => {
		const contexts = [context(1, words(40)), context(2, words(2000)), context(3, words(5))];
		const budget = emptyPrompt + 600;
		const result = fit(contexts, budget);
		assert.deepEqual(
			result.contexts.map((chosen) => chosen.rank),
			[1, 2],
		);
		assert.equal(result.trimmed, true);
		assert.ok(contexts[1]!.text.startsWith(result.contexts[1]!.text));
		assert.ok(result.contexts[1]!.text.length < contexts[1]!.text.length);
		assert.ok(result.promptTokens <= budget);
		assert.ok(result.promptTokens >= 0.9 * budget, `${result.promptTokens} of ${budget}`);
		assert.equal(result.promptTokens, promptOf(result.contexts));
	});

	test('drops a context that would get fewer than minTokens and adds nothing after it', () => {
		const first = context(1, words(100));
		const withFirst = promptOf([first]);
		const contexts = [first, context(2, words(500)), context(3, 'short')];
		// Room for the third context whole, but not for 64 tokens of the second.
		const budget = withFirst + 40;
		assert.ok(promptOf([first, contexts[2]!]) <= budget);
		const result = fit(contexts, budget);
		assert.deepEqual(result.contexts, [first]);
		assert.equal(result.trimmed, false);
		assert.equal(result.promptTokens, withFirst);
		assert.equal(fit(contexts, budget, { minTokens: 10 }).contexts.length, 2);
	});

	test('never lets a later context jump ahead of an earlier one that did not fit', () => {
		const random = seededRandom(99);
		for (let round = 0; round < 100; round++) {
			const contexts = Array.from({ length: 6 }, (_, index) => context(index + 1, words(1 + Math.floor(random() * 300), random)));
			const budget = emptyPrompt + Math.floor(random() * 1500);
			const result = fit(contexts, budget);
			result.contexts.forEach((chosen, index) => assert.equal(chosen.rank, index + 1));
			const last = result.contexts.length - 1;
			result.contexts.forEach((chosen, index) => {
				if (index < last || !result.trimmed) assert.equal(chosen, contexts[index]);
			});
		}
	});

	test('never exceeds the budget, even when the prompt counts more than its parts', () => {
		const random = seededRandom(2024);
		// Chat templates add tokens around content, and merges at the seams are not additive.
		const greedy = (messages: ChatMessage[]): number => Math.ceil(countPromptTokens(messages) * 1.07) + 3;
		for (let round = 0; round < 200; round++) {
			const contexts = Array.from({ length: 1 + Math.floor(random() * 5) }, (_, index) =>
				context(index + 1, words(Math.floor(random() * 800), random)),
			);
			const budget = Math.floor(random() * 2500);
			for (const counter of [countPromptTokens, greedy]) {
				const result = fit(contexts, budget, { countPromptTokens: counter });
				assert.equal(result.promptTokens, counter(buildPrompt(question, result.contexts, 'en')));
				if (result.contexts.length > 0) assert.ok(result.promptTokens <= budget);
			}
		}
	});

	test('gives up on a trimmed context after a bounded number of tries', () => {
		let calls = 0;
		// A prompt counter that always finds the context's text too big.
		const hostile = (messages: ChatMessage[]): number => {
			calls++;
			return countPromptTokens(messages) + (messages[1]!.content.includes('astro') ? 10_000 : 0);
		};
		const result = fit([context(1, words(3000))], 1000, { countPromptTokens: hostile });
		assert.deepEqual(result.contexts, []);
		assert.ok(calls < 12, `${calls} prompt counts`);
	});

	test('returns no contexts when even the bare prompt exceeds the budget', () => {
		const result = fit([context(1, 'tiny')], emptyPrompt - 1);
		assert.deepEqual(result.contexts, []);
		assert.equal(result.promptTokens, emptyPrompt);
		assert.equal(result.trimmed, false);
	});

	test('fills at least 90% of the budget from a 1 MB Japanese context without tokenizing it whole', () => {
		const sentence = '東京の天気は晴れで、気温は二十度です。';
		const text = sentence.repeat(Math.ceil(1_000_000 / sentence.length));
		let longest = 0;
		const watched: CountTokens = (piece) => {
			longest = Math.max(longest, piece.length);
			return countTokens(piece);
		};
		const budget = 1300;
		const result = fitContexts({
			question: 'デプロイ方法は？',
			lang: 'ja',
			contexts: [context(1, text), context(2, 'next')],
			budget,
			countPromptTokens: (messages) => messages.reduce((sum, message) => sum + watched(message.content) + MESSAGE_OVERHEAD, 0),
			countTokens: watched,
		});
		assert.equal(result.contexts.length, 1);
		assert.equal(result.trimmed, true);
		assert.ok(text.startsWith(result.contexts[0]!.text));
		assert.ok(result.promptTokens <= budget);
		assert.ok(result.promptTokens >= 0.9 * budget, `${result.promptTokens} of ${budget}`);
		assert.ok(longest < 100_000, `longest counted text: ${longest} characters`);
	});

	test('fills at least 90% of the budget from a 1 MB English context', () => {
		const text = words(200_000);
		assert.ok(text.length >= 1_000_000);
		const budget = 1300;
		const result = fit([context(1, text)], budget);
		assert.equal(result.contexts.length, 1);
		assert.equal(result.trimmed, true);
		assert.ok(text.startsWith(result.contexts[0]!.text));
		assert.ok(result.promptTokens <= budget);
		assert.ok(result.promptTokens >= 0.9 * budget, `${result.promptTokens} of ${budget}`);
	});

	test('keeps whole a long context that still fits and goes on to the next', () => {
		// Far more characters than tokens, so it is measured by windows, yet it fits.
		const sparse = context(1, `deploy ${' '.repeat(40_000)} done`);
		const next = context(2, words(10));
		const result = fit([sparse, next], emptyPrompt + 100);
		assert.deepEqual(result.contexts, [sparse, next]);
		assert.equal(result.contexts[0], sparse);
		assert.equal(result.trimmed, false);
	});
});
