import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';

/** Link errors of file systems without hard links (some network shares, FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP']);
/** How long a process that finds the name claimed waits for the claimant's rename. */
const CLAIM_WAIT_MS = 2000;
const CLAIM_POLL_MS = 20;

/**
 * Creates `path` holding `content` unless a file of that name exists; true if this call created
 * it. Whole or not at all: the content is written and flushed beside it, then linked to the name,
 * and a link never replaces an existing name. So of two processes starting together on one data
 * directory (replicas sharing it) one writes the secret and the other reads that one, never a
 * half-written file, where checking for the file and then writing it gave each its own secret.
 * Where the file system has no hard links, the complete file is renamed onto the name under a
 * claim (renameUnclaimed). `link` is for tests.
 */
export function createFileOnce(
  path: string,
  content: string,
  mode: number,
  link: (existing: string, name: string) => void = linkSync,
): boolean {
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  try {
    writeFlushed(partial, content, mode);
    try {
      link(partial, path);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST') return false;
      if (!NO_HARD_LINKS.has(code)) throw error;
    }
    return renameUnclaimed(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
}

/** A new file, its content on the disk before it is given a name: a crash leaves no empty key. */
function writeFlushed(file: string, content: string, mode: number): void {
  const descriptor = openSync(file, 'wx', mode);
  try {
    writeFileSync(descriptor, content);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Renames the complete `partial` onto `path` unless `path` exists. A rename replaces a name, so
 * one process at a time checks and renames: the one that creates `<path>.claim` exclusively
 * (which needs no hard link). One that finds the claim taken waits for the name to appear and
 * keeps the file found there. The name was created empty and then written, before: a crash or a
 * full disk in between left an empty secret, read as the key by every later start (an audit's
 * finding). A claim left by a process that died holding it (between the check and the rename)
 * is refused with its name, for the operator to remove.
 */
function renameUnclaimed(partial: string, path: string): boolean {
  const claim = `${path}.claim`;
  let descriptor: number;
  try {
    descriptor = openSync(claim, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (appears(path, CLAIM_WAIT_MS)) return false;
    throw new Error(
      `${claim} exists but ${path} does not: another process is creating it, or one stopped ` +
        'while doing so; remove the claim if no other process is starting',
    );
  }
  try {
    if (existsSync(path)) return false;
    renameSync(partial, path);
    return true;
  } finally {
    closeSync(descriptor);
    rmSync(claim, { force: true });
  }
}

function appears(path: string, withinMs: number): boolean {
  const deadline = Date.now() + withinMs;
  while (!existsSync(path)) {
    if (Date.now() >= deadline) return false;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, CLAIM_POLL_MS);
  }
  return true;
}
