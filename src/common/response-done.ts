import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Calls `listener` once the response is done, with whether it was answered: its last byte handed
 * to the connection (`finish`) before the response closed, or not (cut off: the client went
 * away). Node emits `close` on a response in both cases, once, after `finish` when there is one.
 * `response.writableFinished` does not tell the two apart on Node 20: a response ended on a
 * connection the client had already closed (the body parser's 400 for a body cut off half-way)
 * reads as finished there, though no byte was sent and no `finish` comes (Node 22 and later
 * leave it false).
 * The connection's `close` settles it too: on Node 20 a pipelined response still queued behind
 * an earlier one when the client leaves never gets its own `close` (Node 22 and later emit it).
 * Nothing is stored on the response: a property added to it under a computed key (a symbol, say,
 * to share one listener between callers) made V8 turn the response into a dictionary (it has
 * more than a dozen properties outside the object already): 3.4 KB per request, and every later
 * access to the response slower.
 */
export function whenResponseDone(
  response: ServerResponse,
  listener: (answered: boolean, statusCode: number) => void,
): void {
  let answered = false;
  let settled = false;
  const waiting = waitingOn(response.req.socket);
  const settle = () => {
    if (settled) return;
    settled = true;
    waiting.delete(settle);
    const pastIt = answeredOnSocket.get(response);
    listener(answered || pastIt !== undefined, pastIt ?? response.statusCode);
  };
  waiting.add(settle);
  response.once('finish', () => (answered = true));
  response.once('close', settle);
}

/**
 * Responses whose answer was written on the socket, past them: the 408 of a body too slow to
 * arrive (client-errors.ts). Theirs sends no `finish`, and they counted as cut off (an audit's
 * finding). A set beside the responses, not a mark on them (see above).
 */
const answeredOnSocket = new WeakMap<ServerResponse, number>();

/**
 * Records that `response` was answered `status` on its socket, by Node's parser's error handler.
 * Its own status is not that one: the body parser, cut off, has the app answer it a 400 that
 * goes nowhere.
 */
export function answeredPastResponse(response: ServerResponse, status: number): void {
  answeredOnSocket.set(response, status);
}

/**
 * Responses whose connection was closed, or ended, by Node's parser's error handler before their
 * head was written (client-errors.ts): what they write afterwards reaches no one. The client that
 * leaves mid-upload is the common case: its end of stream is the parser's HPE_INVALID_EOF_STATE,
 * whose handler ends the connection, and the body parser's 400, written after that, went nowhere
 * but read as sent (`headersSent`, the socket still attached; a review's finding).
 */
const cutOffBeforeHead = new WeakSet<ServerResponse>();

/** Records that nothing `response` writes from now on can reach its client. */
export function cutOffBeforeItsHead(response: ServerResponse): void {
  cutOffBeforeHead.add(response);
}

/**
 * The status a response that was not answered whole sent before its connection closed, or null
 * when none was. A pipelined answer queued behind another has its head written (headersSent)
 * into a buffer of its own, with no connection yet: nothing of it was sent.
 */
export function statusSentBeforeClose(response: ServerResponse): number | null {
  if (cutOffBeforeHead.has(response)) return null;
  return response.headersSent && response.socket ? response.statusCode : null;
}

/**
 * The responses waiting on each connection, settled when it closes: one `close` listener per
 * connection, however many requests it carries (one per response would pile up on a kept-alive
 * or pipelining connection and trip Node's ten-listener warning).
 */
const waitingBySocket = new WeakMap<Socket, Set<() => void>>();

function waitingOn(socket: Socket): Set<() => void> {
  const known = waitingBySocket.get(socket);
  if (known) return known;
  const waiting = new Set<() => void>();
  waitingBySocket.set(socket, waiting);
  socket.once('close', () => {
    for (const settle of waiting) settle();
  });
  return waiting;
}
