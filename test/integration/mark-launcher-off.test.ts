import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { AstroConfig, AstroIntegrationLogger } from 'astro';
import { LAUNCHER_OFF_MARKER, markLauncherOff } from '../../integration/mark-launcher-off.ts';

type Processor = AstroConfig['markdown']['processor'];

// A processor that echoes its input, so the tests see exactly what the wrapper added. The real processors
// (Sätteri for .md, @astrojs/mdx's for .mdx) are exercised by the island build test.
function echoProcessor(): Processor & { mdxInputs: string[] } {
	const mdxInputs: string[] = [];
	return {
		name: 'echo',
		options: { plugins: [] },
		mdxInputs,
		createRenderer: async () => ({
			render: async (content: string) => ({
				code: `<p>${content}</p>`,
				metadata: { headings: [], localImagePaths: [], remoteImagePaths: [], frontmatter: {} },
			}),
		}),
		createMdxRenderer: async () => ({
			process: async (content: string) => {
				mdxInputs.push(content);
				return { code: 'export default null;', astroMetadata: {} as never };
			},
		}),
	};
}

const silentLogger = (warnings: string[]) => ({ warn: (message: string) => warnings.push(message) }) as unknown as AstroIntegrationLogger;

describe('marking pages whose launcher is off', () => {
	let root: string;
	const page = (name: string) => join(root, 'src', 'pages', name);

	before(async () => {
		root = await mkdtemp(join(tmpdir(), 'concierge-marker-'));
		await mkdir(join(root, 'src', 'pages'), { recursive: true });
		await writeFile(page('off.md'), '---\ntitle: Off\nconcierge:\n  launcher: false\n---\n\nText.\n');
		await writeFile(page('out.md'), '\uFEFF---\nconcierge: false\n---\n\nText.\n');
		await writeFile(page('on.md'), '---\ntitle: On\nconcierge: { index: false }\n---\n\nText.\n');
		await writeFile(page('plain.md'), 'Text without frontmatter.\n');
		await writeFile(page('bad.md'), '---\ntitle: Bad\nconcierge:\n  launcher: "no"\n---\n\nText.\n');
		await writeFile(page('off.mdx'), '---\nconcierge: { launcher: false }\n---\n\nexport const x = 1;\n\nText {x}.\n');
		await writeFile(page('on.mdx'), '---\ntitle: On\n---\n\nText.\n');
	});

	after(async () => {
		if (root) await rm(root, { recursive: true, force: true });
	});

	const render = async (name: string | undefined, warnings: string[] = []) => {
		const processor = markLauncherOff(echoProcessor(), { root, logger: silentLogger(warnings) });
		const renderer = await processor.createRenderer({});
		return (await renderer.render('Text.', name === undefined ? {} : { fileURL: pathToFileURL(page(name)) })).code;
	};

	test('ends a markdown page with the marker when its frontmatter turns the launcher off', async () => {
		assert.equal(await render('off.md'), `<p>Text.</p>${LAUNCHER_OFF_MARKER}`);
		assert.equal(await render('out.md'), `<p>Text.</p>${LAUNCHER_OFF_MARKER}`, 'concierge: false, after a byte order mark');
		assert.equal(LAUNCHER_OFF_MARKER, '<template data-concierge-launcher="off"></template>');
	});

	test('leaves pages that keep the launcher, and markdown without a file, as rendered', async () => {
		assert.equal(await render('on.md'), '<p>Text.</p>');
		assert.equal(await render('plain.md'), '<p>Text.</p>');
		assert.equal(await render(undefined), '<p>Text.</p>');
	});

	test('appends the marker to MDX source as a JSX element after the last line', async () => {
		const inner = echoProcessor();
		const processor = markLauncherOff(inner, { root, logger: silentLogger([]) });
		const renderer = await processor.createMdxRenderer!({}, { optimize: false });
		await renderer.process('export const x = 1;\n\nText {x}.\n', page('off.mdx'), {});
		await renderer.process('Text.\n', page('on.mdx'), {});
		assert.deepEqual(inner.mdxInputs, [`export const x = 1;\n\nText {x}.\n\n\n${LAUNCHER_OFF_MARKER}\n`, 'Text.\n']);
	});

	test('warns of a wrong value with its file and line and keeps the launcher, leaving the build to stop', async () => {
		const warnings: string[] = [];
		assert.equal(await render('bad.md', warnings), '<p>Text.</p>');
		assert.deepEqual(warnings, [
			'src/pages/bad.md:4: frontmatter key `concierge.launcher` must be true or false, not "no"; the launcher stays on this page',
		]);
	});

	test('keeps the processor name and the very options object that integrations extend', () => {
		const inner = echoProcessor();
		const processor = markLauncherOff(inner, { root, logger: silentLogger([]) });
		assert.equal(processor.name, 'echo');
		assert.equal(processor.options, inner.options);
	});
});
