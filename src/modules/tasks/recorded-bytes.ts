import { createHash } from 'node:crypto';
import { pipeline, Readable, Transform } from 'node:stream';

/** A file's stream that ended before the bytes its response promised (its Content-Length). */
export class CutShortError extends Error {
  constructor(
    readonly passed: number,
    readonly expected: number,
  ) {
    super(`the file ended after ${passed} of its ${expected} bytes`);
  }
}

/** A file's bytes, all there, that are not those its recorded SHA-256 names. */
export class OtherBytesError extends Error {
  constructor(readonly sha256: string) {
    super(`the file's bytes hash to ${sha256.slice(0, 12)}…, not to the SHA-256 recorded`);
  }
}

/** A file found whole before that changed on disk while it was sent (not hashed again). */
export class ChangedWhileSentError extends Error {
  constructor() {
    super('the file changed on disk while it was sent');
  }
}

/** How a file's bytes are checked as they are sent: hashed, or known whole and watched. */
export type BytesCheck =
  | { sha256: string; onHashed: (recorded: boolean) => void }
  /** Found whole before (VerifiedFiles): whether it is still that file, asked at its end. */
  | { unchanged: () => Promise<boolean> };

/**
 * `source`'s bytes, failing where they are not the file recorded: with CutShortError where it
 * ends before `expected` bytes; with OtherBytesError when its SHA-256 is not the recorded one
 * (`onHashed` says what the hash found); for a file this process found whole before, not hashed
 * again (VerifiedFiles), with ChangedWhileSentError when it is no longer that file at its end (a
 * review: a file overwritten in place during such a download was sent whole). A file cut short
 * in place while it is read (its size checked, then truncated) ends early without an error, and
 * a response piped from it was ended as if complete, short of its Content-Length. A file changed
 * in place, its size kept (a flipped bit, a disk's rot), was sent whole under the recorded
 * X-Content-SHA256 and ETag (a filesystem faults audit). The last chunk is held back until the
 * check is done, so that a client never has every promised byte of other bytes: its download
 * is broken off short. Joined by `pipeline`: a read error fails the stream returned, and that
 * stream destroyed (its client gone) destroys `source`, which closes the file.
 */
export function recordedBytes(source: Readable, expected: number, check: BytesCheck): Readable {
  let passed = 0;
  let held: Buffer | undefined;
  const hash = 'sha256' in check ? createHash('sha256') : undefined;
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      passed += chunk.length;
      hash?.update(chunk);
      const previous = held;
      held = chunk;
      callback(null, previous);
    },
    flush(callback) {
      if (passed < expected) return callback(new CutShortError(passed, expected));
      if ('unchanged' in check) {
        check.unchanged().then(
          (unchanged) => callback(unchanged ? null : new ChangedWhileSentError(), held),
          (error: Error) => callback(error),
        );
        return;
      }
      const actual = hash!.digest('hex');
      check.onHashed(actual === check.sha256);
      if (actual !== check.sha256) return callback(new OtherBytesError(actual));
      callback(null, held);
    },
  });
  // Errors are the returned stream's to report; this callback would see them a second time.
  pipeline(source, checked, () => undefined);
  return checked;
}
