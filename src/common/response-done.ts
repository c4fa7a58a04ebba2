import type { ServerResponse } from 'node:http';

/**
 * Calls `listener` once the response is done, with whether it was answered: its last byte handed
 * to the connection (`finish`) before the response closed, or not (cut off: the client went
 * away). Node emits `close` on a response in both cases, once, after `finish` when there is one.
 * `response.writableFinished` does not tell the two apart on Node 20: a response ended on a
 * connection the client had already closed (the body parser's 400 for a body cut off half-way)
 * reads as finished there, though no byte was sent and no `finish` comes (Node 22 and later
 * leave it false).
 * Nothing is stored on the response: a property added to it under a computed key (a symbol, say,
 * to share one listener between callers) made V8 turn the response into a dictionary (it has
 * more than a dozen properties outside the object already): 3.4 KB per request, and every later
 * access to the response slower.
 */
export function whenResponseDone(
  response: ServerResponse,
  listener: (answered: boolean) => void,
): void {
  let answered = false;
  response.once('finish', () => (answered = true));
  response.once('close', () => listener(answered));
}
