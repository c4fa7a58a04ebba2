import type { ServerResponse } from 'node:http';
import { pipeline, Readable, Transform } from 'node:stream';

/**
 * Calls `listener` once the response is done: sent (`response.writableFinished`), or cut off
 * because the client went away. Node emits `close` on a response in both cases, once.
 * Nothing is stored on the response: a property added to it under a computed key (a symbol, say,
 * to share one listener between callers) made V8 turn the response into a dictionary (it has
 * more than a dozen properties outside the object already): 3.4 KB per request, and every later
 * access to the response slower.
 */
export function whenResponseDone(response: ServerResponse, listener: () => void): void {
  response.on('close', listener);
}

/** Responses whose whole streamed body was written (`streamedBody`), though not ended. */
const wholeBodies = new WeakSet<ServerResponse>();

/**
 * Whether a done response was answered: ended and sent, or its whole streamed body written.
 * A client that has every byte its Content-Length promised may close at once (curl exits), and
 * often does before the stream's end has reached the response: that answer was complete.
 */
export function answered(response: ServerResponse): boolean {
  return response.writableFinished || wholeBodies.has(response);
}

/**
 * `source` as the body of `response`, `length` bytes: once they have all passed into the
 * response, it counts as answered (`answered`). Errors of `source` reach the returned stream,
 * and destroying that (the client went away) destroys `source`.
 */
export function streamedBody(response: ServerResponse, source: Readable, length: number): Readable {
  let passed = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      passed += chunk.length;
      if (passed >= length) wholeBodies.add(response);
      done(null, chunk);
    },
  });
  // The callback only keeps pipeline from throwing: the error is the returned stream's now.
  pipeline(source, counted, () => undefined);
  return counted;
}
