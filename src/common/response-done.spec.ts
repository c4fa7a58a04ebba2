import { once } from 'node:events';
import { createServer, request, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { whenResponseDone } from './response-done';

/**
 * What the listeners saw, per response: their order, and whether the response was sent; and
 * how many symbol-keyed properties watching the response added to it.
 */
interface Seen {
  calls: string[];
  finished: boolean[];
  symbolsAdded: number;
}

/** A loopback server that watches each response with two listeners, then lets `answer` reply. */
async function watchingServer(answer: (response: ServerResponse) => void): Promise<{
  server: Server;
  port: number;
  seen: Promise<Seen>;
}> {
  let resolve!: (seen: Seen) => void;
  const seen = new Promise<Seen>((done) => (resolve = done));
  const server = createServer((_request, response) => {
    const result: Seen = { calls: [], finished: [], symbolsAdded: 0 };
    const record = (name: string) => () => {
      result.calls.push(name);
      result.finished.push(response.writableFinished);
      if (result.calls.length === 2) setImmediate(() => resolve(result));
    };
    const symbols = Object.getOwnPropertySymbols(response).length;
    whenResponseDone(response, record('log'));
    whenResponseDone(response, record('metrics'));
    result.symbolsAdded = Object.getOwnPropertySymbols(response).length - symbols;
    answer(response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, seen };
}

describe(whenResponseDone.name, () => {
  it('calls every listener once, in order, when the response has been sent', async () => {
    const { server, port, seen } = await watchingServer((response) => response.end('ok'));
    try {
      const got = await fetch(`http://127.0.0.1:${port}/`);
      expect(await got.text()).toBe('ok');
      // Nothing stored on the response (see whenResponseDone).
      expect(await seen).toEqual({
        calls: ['log', 'metrics'],
        finished: [true, true],
        symbolsAdded: 0,
      });
    } finally {
      server.close();
    }
  });

  it('calls them once, unfinished, when the client goes away before the answer', async () => {
    const { server, port, seen } = await watchingServer((response) => {
      response.write('partial');
      // Never ended: the client below goes away after the first bytes.
    });
    try {
      const client = request({ host: '127.0.0.1', port, path: '/' });
      client.on('error', () => undefined);
      client.on('response', (response) => response.once('data', () => client.destroy()));
      client.end();
      expect(await seen).toEqual({
        calls: ['log', 'metrics'],
        finished: [false, false],
        symbolsAdded: 0,
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
