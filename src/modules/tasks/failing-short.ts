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

/**
 * `source`'s bytes, failing with CutShortError where it ends before `expected` of them. A file
 * cut short in place while it is read (its size checked, then truncated) ends early without an
 * error, and a response piped from it was ended as if complete, short of its Content-Length.
 * Joined by `pipeline`: a read error fails the stream returned, and that stream destroyed (its
 * client gone) destroys `source`, which closes the file.
 */
export function failingShort(source: Readable, expected: number): Readable {
  let passed = 0;
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      passed += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      callback(passed < expected ? new CutShortError(passed, expected) : null);
    },
  });
  // Errors are the returned stream's to report; this callback would see them a second time.
  pipeline(source, checked, () => undefined);
  return checked;
}
