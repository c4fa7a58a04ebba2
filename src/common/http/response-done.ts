import type { ServerResponse } from 'node:http';

const DONE = Symbol('responseDone');

interface Watched {
  [DONE]?: (() => void)[];
}

/**
 * Calls `listener` once the response has finished or closed, whichever comes first (a client
 * that went away closes it unfinished: `response.writableFinished` tells). One pair of listeners
 * per response, however many callers (request logging, metrics), rather than a pair each: this
 * runs on every request.
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
  let called = false;
  const done = () => {
    if (called) return;
    called = true;
    for (const each of listeners) each();
  };
  response.on('finish', done);
  response.on('close', done);
}
