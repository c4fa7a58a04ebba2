import type { Stats } from 'node:fs';
import { lruCache } from '../../common/lru-cache';

/** Files whose verdict a process keeps: far more than the datasets downloaded in a while. */
const FILES_REMEMBERED = 10_000;

/**
 * Which file a path named and as what: device, inode, size, modification and change times. The
 * inode alone is given again at once to a file written after one removed, and a write in place
 * keeps it; the change time moves with every write, `cp -p` and `touch -r` included.
 */
export function fileStateOf(info: Stats): string {
  return [info.dev, info.ino, info.size, info.mtimeMs, info.ctimeMs].join(':');
}

/** What a download found a file's bytes to be against the SHA-256 its task records. */
export type Verdict = 'recorded' | 'other';

/**
 * What this process found of dataset files' bytes, by the file's identity on disk (device,
 * inode, size, change and modification times) and the hash recorded for it. A download that
 * finds the recorded bytes spares the next ones the hash (a downloads audit measured 2–4 ms of
 * CPU per MB more with it, end to end); one that finds other bytes makes the next ones the 503
 * of a missing file at once, where a retrying client (wget: 20 tries) had the whole file read,
 * hashed and sent short again each time. A file written again, in place too, is another
 * identity: its times change.
 */
export class VerifiedFiles {
  private readonly verdicts = lruCache<string, Verdict>(FILES_REMEMBERED);

  keyOf(info: Stats, sha256: string): string {
    return `${fileStateOf(info)}:${sha256}`;
  }

  verdictOf(key: string): Verdict | undefined {
    return this.verdicts.get(key);
  }

  record(key: string, verdict: Verdict): void {
    this.verdicts.set(key, verdict);
  }
}
