import type { ServerResponse } from 'node:http';

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
