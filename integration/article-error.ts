/**
 * A problem with one article that should stop the build, located as `<file>:<line>: <what>`
 * so editors and terminals can jump to it.
 */
export class ArticleError extends Error {
	/** The article's path, as given to the parser. */
	file: string;
	/** 1-based line in the article, when the problem has one. */
	line: number | undefined;

	constructor(file: string, line: number | undefined, what: string, options?: ErrorOptions) {
		super(`${file}${line === undefined ? '' : `:${line}`}: ${what}`, options);
		this.name = 'ArticleError';
		this.file = file;
		this.line = line;
	}
}
