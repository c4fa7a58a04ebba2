import type { ServerResponse } from 'node:http';

const DONE = Symbol('responseDone');

interface Watched {
  [DONE]?: (() => void)[];
}

/**
 * Calls `listener` once the response is done: sent (`response.writableFinished`), or cut off
 * because the client went away. Node emits `close` on a response in both cases, once, so one
 * listener per response serves every caller (request logging, metrics): this runs on every
 * request.
 */
export function whenResponseDone(response: ServerResponse, listener: () => void): void {
  const watched = response as ServerResponse & Watched;
  const waiting = watched[DONE];
  if (waiting) {
    waiting.push(listener);
    return;
  }
  const listeners = [listener];
  watched[DONE] = listeners;
  response.on('close', () => {
    for (const each of listeners) each();
  });
}
