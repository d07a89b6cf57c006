// What every benchmark returns, and how the tables are written: the same text goes to the terminal and
// to docs/benchmarks.md.

/** A table of figures: column headings and rows of already formatted cells. */
export interface Table {
	caption: string;
	columns: string[];
	rows: string[][];
}

/** One target of the issue and whether this run met it. */
export interface Target {
	what: string;
	target: string;
	measured: string;
	met: boolean;
	/** Why it was missed, or what qualifies the figure; said beside it in the report. */
	note?: string;
}

/** One benchmark's figures: tables for people, targets to check, raw values for docs/benchmarks.json. */
export interface BenchResult {
	id: string;
	title: string;
	tables: Table[];
	targets: Target[];
	notes: string[];
	raw: unknown;
}

export function markdownTable(table: Table): string {
	const escape = (cell: string) => cell.replaceAll('|', '\\|');
	const lines = [
		`| ${table.columns.map(escape).join(' | ')} |`,
		`| ${table.columns.map(() => '---').join(' | ')} |`,
		...table.rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
	];
	return `${table.caption}\n\n${lines.join('\n')}\n`;
}

export function targetsTable(targets: readonly Target[]): Table {
	return {
		caption: 'Targets:',
		columns: ['what', 'target', 'measured', 'met'],
		rows: targets.map((target) => [
			target.what,
			target.target,
			target.measured,
			target.met ? 'yes' : `**missed**${target.note ? `: ${target.note}` : ''}`,
		]),
	};
}

/** A benchmark's section of the report: its tables, its targets, then its notes. */
export function formatResult(result: BenchResult): string {
	const parts = [`## ${result.title}\n`, ...result.tables.map(markdownTable)];
	if (result.targets.length > 0) parts.push(markdownTable(targetsTable(result.targets)));
	const notes = [...result.notes, ...result.targets.filter((target) => target.met && target.note).map((target) => `${target.what}: ${target.note}`)];
	if (notes.length > 0) parts.push(notes.map((note) => `- ${note}`).join('\n') + '\n');
	return parts.join('\n');
}

export function median(values: readonly number[]): number {
	return quantile(values, 0.5);
}

/** The q-quantile by linear interpolation between order statistics. */
export function quantile(values: readonly number[], q: number): number {
	if (values.length === 0) return Number.NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const at = (sorted.length - 1) * q;
	const low = Math.floor(at);
	const high = Math.ceil(at);
	return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (at - low);
}

export function ms(value: number, digits = value < 1 ? 3 : value < 10 ? 2 : 1): string {
	return `${value.toFixed(digits)} ms`;
}

export function bytes(value: number): string {
	return `${Math.round(value).toLocaleString('en-US')} B`;
}

export function megabytes(value: number): string {
	return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

export function percent(fraction: number, digits = 2): string {
	return `${(fraction * 100).toFixed(digits)}%`;
}

export function count(value: number): string {
	return value.toLocaleString('en-US');
}
