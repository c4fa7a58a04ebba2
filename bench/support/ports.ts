import { once } from 'node:events';
import { createServer } from 'node:net';

/** Loopback ports for the servers tests and benchmarks start. */

/** A port the OS just handed out: unlike a random pick, it cannot collide with a listener. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * A free loopback port below Linux's ephemeral range (32768–60999), which bind(0) never hands
 * out: a process that the test starts, and that then opens servers of its own on port 0 (the
 * devnet of `npm start`), cannot take it before the process listens on it.
 */
export async function freeListeningPort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    server.close();
    await once(server, 'close');
    return port;
  }
  throw new Error('no free port found in 20000-31999');
}
