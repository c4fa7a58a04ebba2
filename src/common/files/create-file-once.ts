import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Creates `path` holding `content` unless a file of that name exists; true if this call created
 * it. Whole or not at all: the content is written beside it, then linked to the name, and a link
 * never replaces an existing name. So of two processes starting together on one data directory
 * (replicas sharing it) one writes the secret and the other reads that one, never a half-written
 * file, where checking for the file and then writing it gave each its own secret.
 */
export function createFileOnce(path: string, content: string, mode: number): boolean {
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  writeFileSync(partial, content, { mode, flag: 'wx' });
  try {
    linkSync(partial, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(partial, { force: true });
  }
}
