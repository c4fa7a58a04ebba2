import { once } from 'node:events';
import { createServer, request, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { answered, streamedBody, whenResponseDone } from './response-done';

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

describe(streamedBody.name, () => {
  /**
   * Serves `bytes` of a 10-byte body from a source that holds back its end until the client has
   * gone (as a file stream's last read can); the client destroys its socket after `readBytes`.
   * Resolves with what `answered` said when the response was done, and whether it had finished.
   */
  async function serve(bytes: number, readBytes: number) {
    let done!: (seen: { answered: boolean; finished: boolean }) => void;
    const seen = new Promise<{ answered: boolean; finished: boolean }>(
      (resolve) => (done = resolve),
    );
    const server = createServer((_request, response) => {
      const source = new Readable({ read: () => undefined });
      source.push(Buffer.alloc(bytes, 1));
      response.setHeader('Content-Length', 10);
      whenResponseDone(response, () =>
        done({ answered: answered(response), finished: response.writableFinished }),
      );
      streamedBody(response, source, 10).pipe(response);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const client = request({ host: '127.0.0.1', port, path: '/' });
      client.on('error', () => undefined);
      client.on('response', (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= readBytes) client.destroy();
        });
      });
      client.end();
      return await seen;
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }

  it('counts a body written whole as answered, though the client closed before it ended', async () => {
    expect(await serve(10, 10)).toEqual({ answered: true, finished: false });
  });

  it('counts a body the client left before it was written whole as not answered', async () => {
    expect(await serve(4, 4)).toEqual({ answered: false, finished: false });
  });
});
