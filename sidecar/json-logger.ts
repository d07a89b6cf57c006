/** Severity of a log line, from least to most severe. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
	/** Where lines go; defaults to standard error, which leaves standard output to the command's own output. */
	stream?: NodeJS.WritableStream;
	/** Least severe level written; defaults to `info`. */
	level?: LogLevel;
}

/** Writes one JSON object per line: `{ time, level, event, ...fields }`. */
export interface JsonLogger {
	debug(event: string, fields?: Record<string, unknown>): void;
	info(event: string, fields?: Record<string, unknown>): void;
	warn(event: string, fields?: Record<string, unknown>): void;
	error(event: string, fields?: Record<string, unknown>): void;
}

const severity: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

// JSON.stringify turns an Error into `{}`; message and code are what an operator acts on, and a
// stack trace would spread one event over a log viewer's screen.
function replacer(_key: string, value: unknown): unknown {
	if (value instanceof Error) {
		const code = (value as { code?: unknown }).code;
		return code === undefined ? { message: value.message } : { message: value.message, code };
	}
	if (typeof value === 'bigint') return value.toString();
	return value;
}

/**
 * Creates a {@link JsonLogger} for the sidecar's structured logs. `time`, `level` and `event`
 * always come first and win over fields of the same name. Logging never throws: fields that
 * cannot be serialized (a cycle, say) are replaced by a note saying so.
 */
export function createJsonLogger(options: JsonLoggerOptions = {}): JsonLogger {
	const stream = options.stream ?? process.stderr;
	const threshold = severity[options.level ?? 'info'];

	function log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
		if (severity[level] < threshold) return;
		const head = { time: new Date().toISOString(), level, event };
		const record: Record<string, unknown> = { ...head };
		for (const [key, value] of Object.entries(fields)) if (!Object.hasOwn(head, key)) record[key] = value;
		let line: string;
		try {
			line = JSON.stringify(record, replacer);
		} catch (error) {
			line = JSON.stringify({ ...head, log_error: `fields not serializable: ${(error as Error).message}` });
		}
		stream.write(`${line}\n`);
	}

	return {
		debug: (event, fields) => log('debug', event, fields),
		info: (event, fields) => log('info', event, fields),
		warn: (event, fields) => log('warn', event, fields),
		error: (event, fields) => log('error', event, fields),
	};
}
