import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a file so that readers see either the old content or the new, never a part:
 * the data goes to a temporary file in the same folder (same file system), which is then renamed over the target.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
	const dir = dirname(path);
	await mkdir(dir, { recursive: true });
	const temporary = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
	try {
		await writeFile(temporary, data);
		await rename(temporary, path);
	} catch (error) {
		await rm(temporary, { force: true });
		throw error;
	}
}
