import { unwatchFile, watchFile } from 'node:fs';

/**
 * Resolves once the poll of `path` (Node's `fs.watchFile`) that the code under test has just
 * started has taken its first look and found the file missing: the look later changes are
 * measured from. A file made before that look is taken for the original, and no change is ever
 * seen; the look is a stat on libuv's thread pool, which a loaded machine can run hundreds of ms
 * late, past a fixed pause. Node calls every listener of a path once for a file missing at the
 * first look, this one too. Call it in the same tick as the watch starts (its look is not
 * awaited before), for a file that is missing.
 */
export function firstLookAtMissing(path: string): Promise<void> {
  return new Promise((resolve) => {
    const looked = () => {
      unwatchFile(path, looked);
      resolve();
    };
    watchFile(path, { persistent: false }, looked);
  });
}
