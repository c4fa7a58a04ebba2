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
