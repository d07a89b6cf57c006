import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chunkArticle } from '../../integration/chunk-article.ts';
import { createEmbedder, type Embedder } from '../../integration/create-embedder.ts';
import { E5_PASSAGE_PREFIX } from '../../integration/runtime/e5.ts';
import { ensureTestModels } from '../models/make-models.ts';

const english =
	'Containers are disposable, but the data of a database must survive a restart. A named volume keeps the database files outside the container. ';
const japanese = '東京の春は気温の差が大きく、朝と夜は冷えます。薄手の上着を一枚持って出かけると安心です。';

// Counted with the tiny e5 model's real tokenizer, so the limit holds for what the model actually reads.
describe('chunking an article', () => {
	let embedder: Embedder;

	before(async () => {
		embedder = await createEmbedder({ model: (await ensureTestModels()).e5, dtype: 'q8' });
	});

	after(async () => {
		await embedder?.dispose();
	});

	const chunk = (sections: { path: string[]; anchor: string; text: string }[], chunkSize = 64, chunkOverlap = 8) =>
		chunkArticle({ url: '/guides/x/', title: 'Docker volumes', sections }, { chunkSize, chunkOverlap, countTokens: embedder.countTokens });

	test('keeps every embedded string, prefix and heading path included, within the chunk size', () => {
		const chunks = chunk([
			{ path: ['Docker volumes', 'Backups'], anchor: 'backups', text: english.repeat(12) },
			{ path: ['Docker volumes', '天気'], anchor: '天気', text: japanese.repeat(12) },
		]);
		assert.ok(chunks.length > 6);
		for (const item of chunks) {
			const tokens = embedder.countTokens(E5_PASSAGE_PREFIX + item.embedText);
			assert.ok(tokens <= 64, `${item.id} reads ${tokens} tokens`);
		}
	});

	test('numbers chunk ids per article and carries the section anchor and heading path', () => {
		const chunks = chunk([
			{ path: [], anchor: '', text: 'Introduction text.' },
			{ path: ['Docker volumes', 'Backups'], anchor: 'backups', text: english.repeat(4) },
		]);
		assert.deepEqual(
			chunks.map((item) => item.id),
			chunks.map((_, n) => `/guides/x/#${n}`),
		);
		assert.equal(chunks[0]!.anchor, '');
		assert.equal(chunks[1]!.anchor, 'backups');
		// The first heading repeats the title, so it is not repeated in the path.
		assert.equal(chunks[1]!.heading, 'Backups');
		assert.match(chunks[1]!.embedText, /^Docker volumes › Backups\n/);
	});

	test('repeats the end of a chunk at the start of the next one in the same section', () => {
		const [first, second] = chunk([{ path: ['Docker volumes', 'Backups'], anchor: 'b', text: english.repeat(6) }]);
		const shared = [...Array(second!.text.length).keys()].filter((k) => k >= 5 && first!.text.endsWith(second!.text.slice(0, k)));
		assert.ok(shared.length > 0, `"${second!.text}" does not start with the end of "${first!.text}"`);
	});

	test('skips sections without text', () => {
		assert.deepEqual(chunk([{ path: ['Docker volumes', 'Empty'], anchor: 'empty', text: '  ' }]), []);
	});

	test('cuts a very long title and heading path so a chunk still has room for text', () => {
		const [first] = chunk([{ path: ['word '.repeat(200)], anchor: 'long', text: 'Short text that must be kept.' }]);
		assert.ok(first!.embedText.endsWith('Short text that must be kept.'));
		assert.ok(embedder.countTokens(E5_PASSAGE_PREFIX + first!.embedText) <= 64);
	});
});
