import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface WrittenFile {
  bytes: number;
  sha256: string;
}

/**
 * A write given up because the service is shutting down: not the file's failure. Its partial
 * file is removed as for any failure (writeFileAtomically), and what asked for the file asks
 * again after the restart (a compile: TaskCompiler).
 */
export class WriteStopped extends Error {
  constructor() {
    super('stopped: the service is shutting down');
    this.name = 'WriteStopped';
  }
}

/**
 * Runs a writer's rename into place: calls `rename` (the rename, flushed), or throws instead to
 * leave the path as it is. A compile holds its task row's lock around it and refuses once the
 * task is no longer `compiling` (TaskCompiler). `written` is the file about to be renamed (its
 * size and SHA-256, and what its writer adds): an erasure records it in the transaction that
 * renames it (DatasetErasure), so that no reader sees the file without its record.
 */
export type RenameWith<T = WrittenFile> = (
  rename: () => Promise<void>,
  written: T,
) => Promise<void>;

/**
 * A rename into place refused by its writer's RenameWith: the file is no longer wanted (a
 * compile whose task another replica completed or failed meanwhile). Not the file's failure.
 */
export class RenameRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenameRefused';
  }
}

/**
 * Writes a file so that no reader ever sees it half-written: `write` fills `partial` (hashed on
 * the way to disk, so the hash is of the very bytes written), which is flushed and only then
 * renamed over `path`, the rename flushed in turn. On failure the partial file is removed. The
 * partial file's name is unique unless given, so writers running at the same time (two
 * replicas) never share one. `renameWith`, when given, runs the rename once the partial file is
 * complete (RenameWith), and may throw instead to leave `path` as it is (the partial file
 * removed): a writer whose file is no longer wanted, such as a compile another replica finished
 * meanwhile.
 */
export async function writeFileAtomically(
  path: string,
  write: (output: Writable) => Promise<void>,
  {
    partial = `${path}.${randomUUID()}.partial`,
    renameWith = (rename) => rename(),
  }: { partial?: string; renameWith?: RenameWith } = {},
): Promise<WrittenFile> {
  // Owner and group only: datasets hold third parties' posts and profiles (the umask may take
  // away more, never add).
  await mkdir(dirname(path), { recursive: true, mode: 0o750 });
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const stored = pipeline(hashing, createWriteStream(partial, { mode: 0o640 }));
  let written: WrittenFile;
  try {
    await Promise.all([
      write(hashing).catch((error: Error) => {
        hashing.destroy(error);
        throw error;
      }),
      stored,
    ]);
    await syncToDisk(partial, 'r+');
    written = { bytes: (await stat(partial)).size, sha256: hash.digest('hex') };
    await renameWith(async () => {
      await rename(partial, path);
      // The rename is the directory's change: flushed too before the caller records the file
      // (a task `completed`), or a power loss could undo it while the database kept the record.
      // Windows opens no directory as a file (and its file system journals the rename itself).
      if (process.platform !== 'win32') await syncToDisk(dirname(path), 'r');
    }, written);
  } catch (error) {
    await stored.catch(() => undefined);
    // The write's error is the one to report: a removal failing too (a disk gone read-only after
    // an I/O error) would replace it (an error-paths audit).
    await rm(partial, { force: true }).catch(() => undefined);
    throw error;
  }
  return written;
}

/** Flushes a file's, or a directory's, data to disk. */
async function syncToDisk(path: string, flags: 'r' | 'r+'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A partial file not written to for this long belongs to no live writer: writers write as they
 * go (a page of rows, a row group), so this is a crashed one's.
 */
export const STALE_PARTIAL_MS = 60 * 60_000;

/**
 * Removes the partial files crashed writers left in `directory` (`<file>.<uuid>.partial`, and
 * the `<file>.partial` of releases before the names were unique), of any file, unless written to
 * within STALE_PARTIAL_MS: another replica may be writing one right now. A whole-directory sweep,
 * not one file's: a writer killed mid-write leaves a fresh partial that no later write of its
 * file removes (a task compiled after a restart is not compiled again).
 */
export async function removeStalePartials(directory: string, now: Date): Promise<void> {
  const names = await readdir(directory).catch(() => [] as string[]);
  let failure: Error | undefined;
  for (const name of names) {
    if (!name.endsWith('.partial')) continue;
    const file = join(directory, name);
    // Not followed: a link is removed, not what it names. Only files: no writer makes a
    // directory of that name, and `rm` failed on one at every pass (EISDIR), before the files
    // sorted after it (a filesystem faults audit).
    const entry = await lstat(file).catch(() => undefined);
    if (!entry || entry.isDirectory() || now.getTime() - entry.mtimeMs <= STALE_PARTIAL_MS)
      continue;
    // One that cannot be removed leaves the others to be: the first failure is thrown after.
    await rm(file, { force: true }).catch((error: Error) => (failure ??= error));
  }
  if (failure !== undefined) throw failure;
}

/**
 * Which file is at `path` (its device and inode), to tell later whether another writer renamed
 * its own into the place since; undefined when there is none.
 */
export function fileIdentity(path: string): Promise<string | undefined> {
  return stat(path, { bigint: true }).then(
    (info) => `${info.dev}:${info.ino}`,
    () => undefined,
  );
}

/**
 * Removes the file at `path` if it is still the one `identity` names (fileIdentity): a file
 * another writer renamed into its place is that writer's, and stays.
 */
export async function removeIfUnchanged(path: string, identity: string): Promise<void> {
  if ((await fileIdentity(path)) === identity) await rm(path, { force: true });
}

/**
 * Moves a file found where a writer is about to put its own to `<path>.replaced-<time>`, and
 * answers where; undefined when there was none. For a file no record names: a dataset restored
 * from a backup newer than the database, another deployment's on a shared DATA_DIR, or a crashed
 * compile's. Renamed over, a complete dataset was lost without a word (a restore audit); set
 * aside, an operator can put it back. The name is the UTC time, to the second, without colons,
 * and a random part: a rename replaces what has the name, and two set-asides in one second (two
 * compiles of one task) lost the first copy (a review).
 */
export async function setAside(path: string, now: Date): Promise<string | undefined> {
  const stamp = now.toISOString().replace(/[-:]|\.\d+/g, '');
  const aside = `${path}.replaced-${stamp}-${randomUUID().slice(0, 8)}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return aside;
}
