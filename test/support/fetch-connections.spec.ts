import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { runInThisContext } from 'node:vm';
import { closeFetchConnections } from './fetch-connections';
import { until } from './until';

describe('closeFetchConnections (the test environment, after each spec file)', () => {
  // The worker's global, which Node's fetch reads; this spec's own global is a sandbox.
  const worker = runInThisContext('globalThis') as object;
  let server: Server;
  let url: string;
  const open = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((_request, response) => response.end('ok'));
    server.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await closeFetchConnections(worker);
    server.close();
  });

  it('closes the connection fetch kept alive, and fetch still works after', async () => {
    expect(await (await fetch(url)).text()).toBe('ok');
    // Kept alive by fetch's pool after the answer: this is what held workers open.
    expect(open.size).toBe(1);

    await closeFetchConnections(worker);
    await until(async () => (open.size === 0 ? true : undefined), 2000);

    expect(await (await fetch(url)).text()).toBe('ok');
  });
});
