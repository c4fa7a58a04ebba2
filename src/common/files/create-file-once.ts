import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, writeFileSync } from 'node:fs';

/** Link errors of file systems without hard links (some network shares, FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * Creates `path` holding `content` unless a file of that name exists; true if this call created
 * it. Whole or not at all: the content is written beside it, then linked to the name, and a link
 * never replaces an existing name. So of two processes starting together on one data directory
 * (replicas sharing it) one writes the secret and the other reads that one, never a half-written
 * file, where checking for the file and then writing it gave each its own secret. Where the file
 * system has no hard links, the name is created exclusively and then written (another process may
 * then read it empty for a moment). `link` is for tests.
 */
export function createFileOnce(
  path: string,
  content: string,
  mode: number,
  link: (existing: string, name: string) => void = linkSync,
): boolean {
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  try {
    writeFileSync(partial, content, { mode, flag: 'wx' });
    try {
      link(partial, path);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST') return false;
      if (!NO_HARD_LINKS.has(code)) throw error;
    }
    return createExclusively(path, content, mode);
  } finally {
    rmSync(partial, { force: true });
  }
}

function createExclusively(path: string, content: string, mode: number): boolean {
  try {
    writeFileSync(path, content, { mode, flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}
