import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AsyncResource } from 'node:async_hooks';
import type { Socket } from 'node:net';
import { ThrottledWarning, WARNING_INTERVAL_MS } from '../logging/throttled-warning';
import { plural } from '../plural';

/**
 * Most requests of one connection that may wait for their turn: a client with more waiting has
 * its connection closed, reading or not (Node parses a whole read before any answer is done, so
 * 33 requests in one write are 32 waiting). Browsers do not pipeline; a client that does,
 * rarely past a handful.
 */
export const MAX_WAITING_PER_CONNECTION = 32;

/**
 * Runs a connection's pipelined requests one at a time: a request that arrives while an earlier
 * answer on its connection is still being written waits until that answer has gone to the
 * connection (Node then gives this one the socket), and is never handled if the connection
 * closes first. Handled at once, as Node does, every request parsed from one read (a thousand
 * in 40 KB) built its answer in memory behind the first: a client that never read held 326 MB
 * of `/openapi.json` answers per connection, and the Swagger UI's files each held a file
 * descriptor that was never closed once the connection went (the file's stream waits for a
 * socket the queued answer never gets, on Node 20) — both found by a connection-level audit.
 * Now a connection holds at most one answer being written, and one with more than `maxWaiting`
 * requests waiting is closed (one warning per interval).
 * A request at the head of its connection (every request of a client that does not pipeline)
 * goes on at once: its response already has the socket.
 */
export function requestsInTurn(
  maxWaiting = MAX_WAITING_PER_CONNECTION,
  warnings = pipeliningWarnings(maxWaiting),
): (request: Request, response: Response, next: NextFunction) => void {
  const waiting = new WeakMap<Socket, number>();
  return (request, response, next) => {
    if (response.socket !== null) return next();
    const socket = request.socket;
    if (socket.destroyed) return;
    const count = (waiting.get(socket) ?? 0) + 1;
    if (count > maxWaiting) {
      warnings.warn(socket.remoteAddress ?? 'an unknown address');
      socket.destroy();
      return;
    }
    waiting.set(socket, count);
    // Bound to this request's scope (request-logging.ts runs first): the `socket` event comes in
    // the scope of the request before it, whose id every line of this one carried, its key audit
    // lines and its "not made" warning included (a live audit).
    const proceed = AsyncResource.bind(next);
    response.once('socket', () => {
      waiting.set(socket, (waiting.get(socket) ?? 1) - 1);
      proceed();
    });
  };
}

function pipeliningWarnings(
  maxWaiting: number,
  intervalMs = WARNING_INTERVAL_MS,
): ThrottledWarning {
  return new ThrottledWarning(
    new Logger('Http'),
    {
      line: (address) =>
        `closed a connection from ${address}: more than ${maxWaiting} pipelined requests ` +
        'waiting for their turn',
      summary: (count, seconds, address) =>
        `closed ${plural(count, 'more such connection')} in ${seconds} s, the last from ${address}`,
    },
    intervalMs,
  );
}
