import { createServer, Server } from 'node:http';
import express from 'express';
import { closeNow, exchange, listenOnLoopback, parse } from '../../../test/support/raw-http';
import { ERROR_DETAILS } from '../errors/error-details';
import { requireHost } from './require-host';

describe(requireHost.name, () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const app = express();
    app.use(requireHost);
    app.use((_request, response) => {
      response.json({ passed: true });
    });
    // Node's own check answers first otherwise (with an empty body); the service turns it off.
    server = createServer({ requireHostHeader: false }, app);
    port = await listenOnLoopback(server);
  });
  afterAll(() => closeNow(server));

  // Written by hand: every HTTP client sends a Host of its own.
  const ask = async (request: string) =>
    parse(await exchange(port, (socket) => socket.write(request)));

  it('answers an HTTP/1.1 request without Host with a 400 and closes the connection', async () => {
    const answer = await ask('GET /items HTTP/1.1\r\n\r\n');
    expect(answer).toMatchObject({
      status: 400,
      headers: { connection: 'close' },
      body: { detail: ERROR_DETAILS.malformedRequest, request_id: expect.any(String) },
    });
  });

  // Node keeps the first and drops the other unsaid (a connection-level audit).
  it('answers a request with two Host lines with a 400, in either version', async () => {
    for (const version of ['1.1', '1.0']) {
      const answer = await ask(`GET /items HTTP/${version}\r\nHost: a\r\nhost: b\r\n\r\n`);
      expect(answer).toMatchObject({
        status: 400,
        headers: { connection: 'close' },
        body: { detail: ERROR_DETAILS.malformedRequest, request_id: expect.any(String) },
      });
    }
  });

  it('lets through an empty Host, which RFC 9112 asks of a target without an authority', async () => {
    const answer = await ask('GET /items HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n');
    expect(answer).toMatchObject({ status: 200, body: { passed: true } });
  });

  it('lets through HTTP/1.0 without Host, which has none to require', async () => {
    const answer = await ask('GET /items HTTP/1.0\r\n\r\n');
    expect(answer).toMatchObject({ status: 200, body: { passed: true } });
  });
});
