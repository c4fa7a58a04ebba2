import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A client that leaves: sends raw bytes (half a body, pipelined requests) over a new loopback
 * connection to `port`, and closes it `stayMs` later without reading the answer.
 */
export async function sendAndLeave(port: number, bytes: string, stayMs = 50): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(bytes);
  await sleep(stayMs);
  socket.destroy();
}

/**
 * A client that gives up mid-upload, as `curl -m 2 --limit-rate 60K` does: sends `head`, then
 * `chunk` every `everyMs` for `forMs`, never the whole body, and closes the connection (`reset`:
 * with a TCP reset, as a client killed with data unread does, rather than an end of stream).
 */
export async function uploadSlowlyAndLeave(
  port: number,
  head: string,
  chunk: string,
  { everyMs, forMs, reset = false }: { everyMs: number; forMs: number; reset?: boolean },
): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  // A write racing the server's close fails: the client is leaving anyway.
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(head);
  for (const until = Date.now() + forMs; Date.now() < until; await sleep(everyMs))
    socket.write(chunk);
  if (reset) socket.resetAndDestroy();
  else socket.destroy();
}
