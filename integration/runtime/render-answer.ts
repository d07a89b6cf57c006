// Browser-safe: the island renders the model's answer, which is untrusted text, as it streams in.
// Only a light markdown subset is honoured, and nothing in it can produce a link, an image or raw HTML:
// the one kind of href ever set is the one the caller's cite() returns.

/** Inline content of a block. */
export type AnswerInline =
	| { type: 'text'; text: string }
	| { type: 'break' }
	| { type: 'strong' | 'em'; content: AnswerInline[] }
	| { type: 'code'; text: string }
	| { type: 'cite'; n: number };

/** One block of an answer; headings arrive as paragraphs whose whole content is strong. */
export type AnswerBlock =
	| { type: 'paragraph'; content: AnswerInline[] }
	| { type: 'list'; ordered: boolean; start: number; items: AnswerInline[][] }
	| { type: 'code'; language: string; text: string };

/** Where a citation `[n]` links to, or `null` when n is not one of the answer's sources. */
export type CiteTarget = (n: number) => { href: string; label: string } | null;

const FENCE = /^ {0,3}(`{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}#{1,6}(?:\s+(.*?))?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const BULLET = /^(\s*)(?:[-*•]\s+|・\s*)(.*)$/;
const NUMBERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
const CITATION = /[[［]\s*([1-9]\d*(?:\s*[,，、]\s*[1-9]\d*)*)\s*[\]］]/y;
// A citation whose closing bracket has not streamed in yet.
const PARTIAL_CITATION = /[[［][\d\s,，、]*$/;
// Intraword `*` and `_` are arithmetic and identifiers (2*3*4, snake_case_words), never emphasis. Only ASCII
// counts as a word here, so Japanese, which has no spaces, can still put emphasis right against its text.
const ASCII_WORD = /[A-Za-z0-9]/;
const SPACE = /\s/;

/**
 * Parses the answer streamed so far. The last block is where the stream is still writing, so there an unclosed
 * `**` or `` ` `` already runs to the end and a half-written citation is held back, rather than flashing raw markers
 * that the next tokens would turn into formatting; in any earlier block they are literal text.
 */
export function parseAnswer(text: string): AnswerBlock[] {
	const lines = text.replace(/\r\n?/g, '\n').split('\n');
	const pending: Array<PendingParagraph | PendingList | Extract<AnswerBlock, { type: 'code' }>> = [];
	let open: PendingParagraph | PendingList | null = null;
	const close = () => {
		if (open) pending.push(open);
		open = null;
	};
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i]!;
		const fence = FENCE.exec(line);
		const heading = HEADING.exec(line);
		const bullet = BULLET.exec(line);
		const numbered = NUMBERED.exec(line);
		if (fence) {
			close();
			const body: string[] = [];
			while (++i < lines.length && !isClosingFence(lines[i]!, fence[1]!)) body.push(lines[i]!);
			pending.push({ type: 'code', language: fence[2]!, text: body.join('\n') });
		} else if (heading || RULE.test(line) || line.trim() === '') {
			close();
			// A bare `##` is a heading whose words have not streamed in yet.
			if (heading?.[1]) pending.push({ type: 'paragraph', heading: true, lines: [heading[1]] });
		} else if (bullet || numbered) {
			const ordered = numbered !== null;
			if (open?.type !== 'list' || open.ordered !== ordered) {
				close();
				open = { type: 'list', ordered, start: ordered ? Number(numbered[2]) : 1, items: [] };
			}
			open.items.push(ordered ? numbered[3]! : bullet![2]!);
		} else if (open?.type === 'list' && /^\s/.test(line)) {
			open.items[open.items.length - 1] += '\n' + line.trim();
		} else {
			if (open?.type !== 'paragraph') close(), (open = { type: 'paragraph', heading: false, lines: [] });
			open.lines.push(line.trim());
		}
	}
	close();
	return pending.map((block, index): AnswerBlock => {
		const edge = index === pending.length - 1;
		if (block.type === 'code') return block;
		if (block.type === 'list') {
			const items = block.items.map((item, i) => parseInline(item, edge && i === block.items.length - 1));
			return { type: 'list', ordered: block.ordered, start: block.start, items };
		}
		const content = parseInline(block.lines.join('\n'), edge);
		return { type: 'paragraph', content: block.heading ? [{ type: 'strong', content }] : content };
	});
}

interface PendingParagraph {
	type: 'paragraph';
	heading: boolean;
	lines: string[];
}

interface PendingList {
	type: 'list';
	ordered: boolean;
	start: number;
	items: string[];
}

function isClosingFence(line: string, fence: string): boolean {
	const trimmed = line.trim();
	return trimmed.startsWith(fence) && /^`+$/.test(trimmed);
}

function parseInline(text: string, edge: boolean): AnswerInline[] {
	const source = edge ? text.replace(PARTIAL_CITATION, '') : text;
	const nodes: AnswerInline[] = [];
	const literal = (value: string) => {
		const last = nodes[nodes.length - 1];
		if (last?.type === 'text') last.text += value;
		else nodes.push({ type: 'text', text: value });
	};
	let i = 0;
	while (i < source.length) {
		const char = source[i]!;
		CITATION.lastIndex = i;
		const citation = char === '[' || char === '［' ? CITATION.exec(source) : null;
		if (citation) {
			for (const n of citation[1]!.split(/[,，、]/)) nodes.push({ type: 'cite', n: Number(n.trim()) });
			i = CITATION.lastIndex;
		} else if (char === '`') {
			const close = source.indexOf('`', i + 1);
			if (close < 0 && !edge) literal(char), i++;
			else {
				const end = close < 0 ? source.length : close;
				nodes.push({ type: 'code', text: source.slice(i + 1, end) });
				i = end + 1;
			}
		} else if (char === '\n') {
			nodes.push({ type: 'break' }), i++;
		} else if ((char === '*' || char === '_') && canOpen(source, i)) {
			const marker = source.startsWith('**', i) ? '**' : char;
			const close = findClose(source, i + marker.length, marker);
			if (close >= 0 || (marker === '**' && edge)) {
				const end = close < 0 ? source.length : close;
				const content = parseInline(source.slice(i + marker.length, end), edge && close < 0);
				if (content.length > 0) nodes.push({ type: marker === '**' ? 'strong' : 'em', content });
				i = end + marker.length;
			} else literal(marker), (i += marker.length);
		} else {
			literal(char), i++;
		}
	}
	return nodes;
}

function canOpen(text: string, at: number): boolean {
	const marker = text.startsWith('**', at) ? '**' : text[at]!;
	const next = text[at + marker.length];
	if (marker === '**') return next === undefined || !SPACE.test(next);
	return next !== undefined && !SPACE.test(next) && !ASCII_WORD.test(text[at - 1] ?? ' ');
}

function findClose(text: string, from: number, marker: string): number {
	for (let j = from; j < text.length; j++) {
		if (text[j] === '`') {
			const close = text.indexOf('`', j + 1);
			if (close >= 0) j = close;
			continue;
		}
		if (text[j] !== marker[0]) continue;
		let run = 1;
		while (text[j + run] === marker[0]) run++;
		const before = text[j - 1]!;
		const after = text[j + run] ?? ' ';
		const fits = marker === '**' ? run >= 2 : run === 1 && !ASCII_WORD.test(after);
		if (fits && j > from && !SPACE.test(before)) return j + run - marker.length;
		j += run - 1;
	}
	return -1;
}

/** Builds the answer's elements with textContent and setAttribute only, so no model output is ever parsed as HTML. */
export function renderAnswer(document: Document, blocks: AnswerBlock[], cite: CiteTarget): DocumentFragment {
	const fragment = document.createDocumentFragment();
	const inline = (parent: Node, nodes: AnswerInline[]) => {
		for (const node of nodes) parent.appendChild(renderInline(document, node, cite, inline));
	};
	for (const block of blocks) {
		if (block.type === 'code') {
			const pre = document.createElement('pre');
			const code = pre.appendChild(document.createElement('code'));
			if (block.language) code.setAttribute('data-language', block.language);
			code.textContent = block.text;
			fragment.appendChild(pre);
		} else if (block.type === 'list') {
			const list = document.createElement(block.ordered ? 'ol' : 'ul');
			if (block.ordered && block.start !== 1) list.setAttribute('start', String(block.start));
			for (const item of block.items) inline(list.appendChild(document.createElement('li')), item);
			fragment.appendChild(list);
		} else {
			inline(fragment.appendChild(document.createElement('p')), block.content);
		}
	}
	return fragment;
}

function renderInline(document: Document, node: AnswerInline, cite: CiteTarget, inline: (parent: Node, nodes: AnswerInline[]) => void): Node {
	switch (node.type) {
		case 'text':
			return document.createTextNode(node.text);
		case 'break':
			return document.createElement('br');
		case 'code': {
			const code = document.createElement('code');
			code.textContent = node.text;
			return code;
		}
		case 'cite': {
			const target = cite(node.n);
			if (!target) return document.createTextNode(`[${node.n}]`);
			const link = document.createElement('a');
			link.className = 'concierge-cite';
			link.setAttribute('href', target.href);
			link.setAttribute('aria-label', target.label);
			link.setAttribute('title', target.label);
			link.textContent = `[${node.n}]`;
			return link;
		}
		default: {
			const element = document.createElement(node.type);
			inline(element, node.content);
			return element;
		}
	}
}
