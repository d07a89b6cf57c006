/** How a job ended, as counted by {@link Metrics.countJob}. */
export type JobOutcome = 'stop' | 'length' | 'cancelled' | 'no_context' | 'error' | 'busy' | 'timeout';

/** The sidecar's counters and gauges, made by {@link createMetrics}. */
export interface Metrics {
	/** Content type of {@link Metrics.render}'s text. */
	readonly contentType: string;
	/** Jobs waiting for the model, not counting the running one. */
	setQueueDepth(n: number): void;
	/** Open WebSocket connections. */
	setConnections(n: number): void;
	countJob(outcome: JobOutcome): void;
	addTokens(n: number): void;
	/** Time from a job's start to its first generated token. */
	observeTtft(seconds: number): void;
	/** Generation speed of one job. */
	observeTokensPerSecond(value: number): void;
	/** Everything in Prometheus' text exposition format. */
	render(): string;
}

const outcomes: readonly JobOutcome[] = ['stop', 'length', 'cancelled', 'no_context', 'error', 'busy', 'timeout'];

// A small CPU-only model reads its prompt in a fraction of a second to tens of seconds, depending on
// how much context was fitted in and how busy the machine is.
const ttftBuckets = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80];
// One to a few dozen tokens a second covers small models on a couple of shared cores.
const tokensPerSecondBuckets = [1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64];

interface Histogram {
	bounds: readonly number[];
	counts: number[];
	sum: number;
	count: number;
}

function histogram(bounds: readonly number[]): Histogram {
	return { bounds, counts: bounds.map(() => 0), sum: 0, count: 0 };
}

function observe(target: Histogram, value: number): void {
	// One NaN would turn the sum into NaN for good.
	if (!Number.isFinite(value)) return;
	target.sum += value;
	target.count++;
	const index = target.bounds.findIndex((bound) => value <= bound);
	if (index >= 0) target.counts[index]!++;
}

function formatNumber(value: number): string {
	if (value === Infinity) return '+Inf';
	if (value === -Infinity) return '-Inf';
	return String(value);
}

function header(name: string, type: string, help: string): string[] {
	return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
}

function renderHistogram(name: string, help: string, data: Histogram): string[] {
	const lines = header(name, 'histogram', help);
	let cumulative = 0;
	for (const [index, bound] of data.bounds.entries()) {
		cumulative += data.counts[index]!;
		lines.push(`${name}_bucket{le="${formatNumber(bound)}"} ${cumulative}`);
	}
	lines.push(`${name}_bucket{le="+Inf"} ${data.count}`);
	lines.push(`${name}_sum ${formatNumber(data.sum)}`);
	lines.push(`${name}_count ${data.count}`);
	return lines;
}

/** Creates the sidecar's {@link Metrics}, all starting at zero, for a Prometheus scrape endpoint. */
export function createMetrics(): Metrics {
	let queueDepth = 0;
	let connections = 0;
	let tokens = 0;
	const jobs = new Map<JobOutcome, number>(outcomes.map((outcome) => [outcome, 0]));
	const ttft = histogram(ttftBuckets);
	const tokensPerSecond = histogram(tokensPerSecondBuckets);

	return {
		contentType: 'text/plain; version=0.0.4; charset=utf-8',
		setQueueDepth(n) {
			if (Number.isFinite(n)) queueDepth = n;
		},
		setConnections(n) {
			if (Number.isFinite(n)) connections = n;
		},
		countJob(outcome) {
			const count = jobs.get(outcome);
			if (count !== undefined) jobs.set(outcome, count + 1);
		},
		addTokens(n) {
			// A counter that went down would read as a restart to Prometheus.
			if (Number.isFinite(n) && n > 0) tokens += n;
		},
		observeTtft(seconds) {
			observe(ttft, seconds);
		},
		observeTokensPerSecond(value) {
			observe(tokensPerSecond, value);
		},
		render() {
			const lines = [
				...header('concierge_queue_depth', 'gauge', 'Jobs waiting for the model, not counting the running one.'),
				`concierge_queue_depth ${formatNumber(queueDepth)}`,
				...header('concierge_connections', 'gauge', 'Open WebSocket connections.'),
				`concierge_connections ${formatNumber(connections)}`,
				...header('concierge_jobs_total', 'counter', 'Jobs by how they ended.'),
				...outcomes.map((outcome) => `concierge_jobs_total{outcome="${outcome}"} ${jobs.get(outcome)}`),
				...header('concierge_tokens_generated_total', 'counter', 'Tokens the model has generated.'),
				`concierge_tokens_generated_total ${formatNumber(tokens)}`,
				...renderHistogram('concierge_ttft_seconds', 'Seconds from the start of a job to its first token.', ttft),
				...renderHistogram('concierge_tokens_per_second', 'Generation speed of a job.', tokensPerSecond),
			];
			return `${lines.join('\n')}\n`;
		},
	};
}
