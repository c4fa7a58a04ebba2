import { once } from 'node:events';
import type { Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';

/** Starts `server` on a free loopback port, and gives the port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Closes `server` and every connection it holds, idle or not. */
export async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

/**
 * Sends raw bytes over a new loopback connection to `port` and returns everything the server
 * writes until it closes the connection: for requests no HTTP client would send.
 */
export function exchange(port: number, send: (socket: Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => send(socket));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}

export interface RawAnswer {
  status: number;
  /** By lower-case name. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** An answer read by `exchange`, whose body is JSON. */
export function parse(answer: string): RawAnswer {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]),
    headers,
    body: JSON.parse(body) as Record<string, unknown>,
  };
}
