import { Stats, unwatchFile, watchFile } from 'node:fs';

/**
 * Polls `path` every `intervalMs` and calls `changed` when the file changes: made, written,
 * replaced or removed. Polled (`fs.watchFile`) rather than watched (`fs.watch`) because writers
 * replace such files atomically (rename), which `fs.watch` on the old inode would miss. Returns
 * the function that stops polling.
 *
 * A file missing at the first poll and still missing is no change: Node calls the listener once
 * for it, every field zero, and each reader of a missing file (HF_RESULTS_PATH, METAGRAPH_FILE)
 * then read it again at once and logged the same failure twice at start (an operator's audit).
 */
export function watchFileChanges(
  path: string,
  intervalMs: number,
  changed: () => void,
): () => void {
  const listener = (current: Stats, previous: Stats) => {
    if (isMissing(current) && isMissing(previous)) return;
    changed();
  };
  watchFile(path, { interval: intervalMs, persistent: false }, listener);
  return () => unwatchFile(path, listener);
}

/** A file `fs.watchFile` could not stat (ENOENT, ENOTDIR, EACCES): its fields all zero. */
function isMissing(stats: Stats): boolean {
  return stats.ino === 0 && stats.nlink === 0 && stats.mtimeMs === 0;
}
