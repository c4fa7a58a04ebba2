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

/**
 * `source`'s bytes, failing where they are not the file recorded: with CutShortError where it
 * ends before `expected` bytes, with OtherBytesError when its SHA-256 is not `sha256` (not
 * hashed when null: a file this process found whole already, VerifiedFiles; `onHashed` says
 * what the hash found). A file
 * cut short in place while it is read (its size checked, then truncated) ends early without an
 * error, and a response piped from it was ended as if complete, short of its Content-Length. A
 * file changed in place, its size kept (a flipped bit, a disk's rot), was sent whole under the
 * recorded X-Content-SHA256 and ETag (a filesystem faults audit). The last chunk is held back
 * until the hash is known, so that a client never has every promised byte of other bytes: its
 * download is broken off short. Joined by `pipeline`: a read error fails the stream returned,
 * and that stream destroyed (its client gone) destroys `source`, which closes the file.
 */
export function recordedBytes(
  source: Readable,
  expected: number,
  sha256: string | null,
  onHashed: (recorded: boolean) => void = () => undefined,
): Readable {
  let passed = 0;
  let held: Buffer | undefined;
  const hash = sha256 === null ? undefined : createHash('sha256');
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      passed += chunk.length;
      if (!hash) return callback(null, chunk);
      hash.update(chunk);
      const previous = held;
      held = chunk;
      callback(null, previous);
    },
    flush(callback) {
      if (passed < expected) return callback(new CutShortError(passed, expected));
      if (!hash) return callback();
      const actual = hash.digest('hex');
      onHashed(actual === sha256);
      if (actual !== sha256) return callback(new OtherBytesError(actual));
      callback(null, held);
    },
  });
  // Errors are the returned stream's to report; this callback would see them a second time.
  pipeline(source, checked, () => undefined);
  return checked;
}
