import { once } from 'node:events';
import { connect, Server, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { exchange, parse, RawAnswer } from '../support/raw-http';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

describe("Errors of Node's HTTP parser", () => {
  let app: TestApp;
  let port: number;

  beforeAll(async () => {
    app = await startTestApp({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' });
    port = Number(new URL(app.url).port);
  });
  afterAll(() => app.close());

  const documented = { detail: expect.any(String), request_id: expect.any(String) };

  /** Holds the answer to the served OpenAPI document, as every e2e answer is. */
  const checkAgainstDocument = (path: string, answer: RawAnswer) =>
    app.contract.check(`${app.url}${path}`, { method: 'GET', ...answer });

  it('answers a malformed request line with a 400 in the documented shape', async () => {
    const answer = parse(await exchange(port, (socket) => socket.write('GARBAGE\r\n\r\n')));
    expect(answer).toMatchObject({
      status: 400,
      body: { ...documented, detail: 'Malformed HTTP request' },
    });
    // No path could be read: held to the rule for a path no operation has.
    checkAgainstDocument('/', answer);
  });

  it('answers headers over 16 KB with a 431', async () => {
    const answer = parse(
      await exchange(port, (socket) =>
        socket.write(
          `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        ),
      ),
    );
    expect(answer).toMatchObject({
      status: 431,
      body: { ...documented, detail: 'Request headers too large' },
    });
    checkAgainstDocument('/api/v1/health', answer);
  });

  it('reads every header within 16 KB, the key after 1,200 others included', async () => {
    const others = Array.from({ length: 1200 }, (_, index) => `a${index}: b\r\n`).join('');
    const answer = parse(
      await exchange(port, (socket) =>
        socket.write(
          `GET /api/v1/health HTTP/1.1\r\nHost: x\r\n${others}X-API-Key: ${TEST_MASTER_KEY}\r\n` +
            'Connection: close\r\n\r\n',
        ),
      ),
    );
    expect(answer.status).toBe(200);
  });

  it('answers a HEAD with headers over 16 KB with a 431 and no body, as HEAD answers are', async () => {
    const answer = await exchange(port, (socket) =>
      socket.write(
        `HEAD /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ),
    );
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(body).toBe('');
  });

  it('answers a client too slow to send its headers with a 408', async () => {
    const started = Date.now();
    const answer = parse(
      await exchange(port, (socket) => socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n')),
    );
    // Node reports the headers' timeout as the whole request's (ERR_HTTP_REQUEST_TIMEOUT).
    expect(answer).toMatchObject({
      status: 408,
      body: { ...documented, detail: 'Request not received in time' },
    });
    expect(Date.now() - started).toBeLessThan(4000);
    checkAgainstDocument('/api/v1/health', answer);
  });

  // Node's 5 s default (6 s with the second Node 20 adds) closed idle connections a proxy in
  // front keeps for 60 s, and it answered 502 for a request sent on one as it closed (an audit's
  // finding). Idle time counts toward neither the headers' nor the request's timeout (1 s, 2 s).
  it('keeps a connection idle for 7 s open for the next request, as its Keep-Alive header says', async () => {
    const socket = connect(port, '127.0.0.1');
    const health = `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`;
    const closed = once(socket, 'close').then(() => 'closed');
    // Writing on a connection the server closed fails: the close says so.
    socket.on('error', () => undefined);
    try {
      await once(socket, 'connect');
      socket.write(health);
      const [first] = (await once(socket, 'data')) as [Buffer];
      expect(first.toString('latin1')).toMatch(
        /^HTTP\/1\.1 200 [^]*\r\nKeep-Alive: timeout=65\r\n/,
      );
      await sleep(7000);
      expect(socket.destroyed).toBe(false);
      socket.write(health);
      const second = once(socket, 'data').then(([chunk]: Buffer[]) => chunk.toString('latin1'));
      expect(await Promise.race([second, closed])).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      socket.destroy();
    }
  }, 15_000);

  /** A request to /api/v1/keys under `id`: its first headers, then `rest` (framing and body). */
  const keysRequest = (method: string, id: string, rest: string) =>
    exchange(port, (socket) =>
      socket.write(
        `${method} /api/v1/keys HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n` +
          `X-API-Key: ${TEST_MASTER_KEY}\r\nContent-Type: application/json\r\n${rest}`,
      ),
    ).then(parse);

  /**
   * Counted answered with `status`, not as a request its client gave up on (an audit's finding).
   */
  const expectCountedAnswered = async (method: string, status: number) => {
    const metrics = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    expect(metrics.text).toMatch(
      new RegExp(
        `^gateway_http_requests_total\\{method="${method}",[^}]*status="${status}"\\} 1$`,
        'm',
      ),
    );
    expect(metrics.text).not.toMatch(
      new RegExp(`^gateway_http_requests_unanswered_total\\{method="${method}"`, 'm'),
    );
  };

  // Express had the request, and gave it its id: a fresh one in the 408 matched nothing the
  // client sent or the log wrote (an audit's finding).
  it("answers a body too slow to arrive with a 408 under the request's own id", async () => {
    const answer = await keysRequest('POST', 'trace-slow-body', 'Content-Length: 10\r\n\r\n{');
    expect(answer).toMatchObject({
      status: 408,
      body: { detail: 'Request not received in time', request_id: 'trace-slow-body' },
    });
    await expectCountedAnswered('POST', 408);
  });

  // The body parser read the whole body before its 413, for as long as the client took to send
  // it (here the 2 s request timeout's 408 came first), and Node answered `Expect:
  // 100-continue` with a 100 by itself, so that the client sent it (an audit's finding).
  it('answers a body declared over BODY_LIMIT with a 413 before any of it is sent, counted as answered', async () => {
    const answer = await keysRequest('POST', 'trace-too-large', 'Content-Length: 2000000\r\n\r\n');
    expect(answer).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
      body: { detail: 'Request body too large', request_id: 'trace-too-large' },
    });
    app.contract.check(`${app.url}/api/v1/keys`, { method: 'POST', ...answer });
    await expectCountedAnswered('POST', 413);
    // Asked to confirm first, the server sends no 100 Continue before the 413.
    const expecting = await exchange(port, (socket) =>
      socket.write(
        `POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n',
      ),
    );
    expect(expecting).toMatch(/^HTTP\/1\.1 413 /);
  });

  // A GET's or DELETE's body is ignored: the answer came at once, on a connection kept alive,
  // where the request timeout then wrote a 408 nobody had asked for, while the body never came
  // (a review's finding).
  it('closes the connection after answering a GET or DELETE whose declared body does not come', async () => {
    const requests = [
      { method: 'GET', path: '/api/v1/health', status: 200 },
      // No operation takes DELETE: a path with other methods answers 405.
      { method: 'DELETE', path: '/api/v1/keys/unknown-key', status: 405 },
    ];
    for (const { method, path, status } of requests) {
      const started = Date.now();
      const answer = await exchange(port, (socket) =>
        socket.write(
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
        ),
      );
      // One answer, its own, then the connection closed: no 408 after it.
      expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toEqual([`HTTP/1.1 ${status} `]);
      expect(parse(answer).headers.connection).toBe('close');
      expect(Date.now() - started).toBeLessThan(1500);
    }
  });

  it('still answers Expect: 100-continue with a 100 for a body within BODY_LIMIT', async () => {
    const body = JSON.stringify({ name: 'sent after 100 Continue' });
    const socket = connect(port, '127.0.0.1');
    try {
      await once(socket, 'connect');
      socket.write(
        `POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
          'Expect: 100-continue\r\nConnection: close\r\n\r\n',
      );
      const [interim] = (await once(socket, 'data')) as [Buffer];
      expect(interim.toString('latin1')).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.write(body);
      await once(socket, 'close');
      expect(parse(Buffer.concat(chunks).toString('utf8'))).toMatchObject({
        status: 200,
        body: { name: 'sent after 100 Continue' },
      });
    } finally {
      socket.destroy();
    }
  });

  // The client is there to read the 400 of a body the parser cannot read: answered, not cut off.
  it("answers a chunked body it cannot read with a 400 under the request's own id, counted as answered", async () => {
    const answer = await keysRequest(
      'PUT',
      'trace-bad-chunk',
      'Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n',
    );
    expect(answer).toMatchObject({
      status: 400,
      body: { detail: 'Malformed HTTP request', request_id: 'trace-bad-chunk' },
    });
    await expectCountedAnswered('PUT', 400);
  });

  // They had none of helmet's headers and no Date, unlike every answer the app writes (a
  // hostile-client review's finding).
  it('gives answers written on the socket the security headers and the Date every other answer has', async () => {
    const usual = await app.http.get('/api/v1/nonexistent').expect(404);
    const security = [
      'strict-transport-security',
      'x-content-type-options',
      'x-frame-options',
      'cross-origin-resource-policy',
    ];
    for (const name of security) expect(usual.headers[name]).toEqual(expect.any(String));
    const onSocket = [
      parse(await exchange(port, (socket) => socket.write('GARBAGE\r\n\r\n'))),
      parse(
        await exchange(port, (socket) =>
          socket.write(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
        ),
      ),
      parse(
        await exchange(port, (socket) => socket.write('CONNECT /api/v1/health HTTP/1.1\r\n\r\n')),
      ),
      await keysRequest('PUT', 'trace-headers', 'Transfer-Encoding: chunked\r\n\r\nzz\r\n'),
    ];
    expect(onSocket.map((answer) => answer.status)).toEqual([400, 431, 405, 400]);
    for (const answer of onSocket) {
      for (const name of security)
        expect([name, answer.headers[name]]).toEqual([name, usual.headers[name]]);
      expect(answer.headers.date).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      expect(Math.abs(Date.parse(answer.headers.date) - Date.now())).toBeLessThan(10_000);
    }
  });
});

// Requests Node's server answered by itself, with an empty body and no request id (an audit).
describe("Requests Node's HTTP server would answer by itself", () => {
  let app: TestApp;
  let port: number;

  beforeAll(async () => {
    app = await startTestApp();
    port = Number(new URL(app.url).port);
  });
  afterAll(() => app.close());

  const ask = (request: string) =>
    exchange(port, (socket) => socket.write(request)).then((answer) => parse(answer));
  const check = (method: string, path: string, answer: RawAnswer) =>
    app.contract.check(`${app.url}${path}`, { method, ...answer });

  it('answers an HTTP/1.1 request without Host with a 400 in the documented shape', async () => {
    const answer = await ask(
      `GET /api/v1/health HTTP/1.1\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`,
    );
    expect(answer).toMatchObject({
      status: 400,
      headers: { connection: 'close', 'x-request-id': expect.any(String) },
      body: { detail: 'Malformed HTTP request', request_id: answer.headers['x-request-id'] },
    });
    check('GET', '/api/v1/health', answer);
    // HTTP/1.0 has no Host to require.
    const old = await ask(`GET /api/v1/health HTTP/1.0\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`);
    expect(old.status).toBe(200);
  });

  it('reads an absolute-form target (RFC 9112, 3.2.2) as the path it names, the key to deactivate in it', async () => {
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'absolute form' })
      .expect(200);
    const key = (created.body as { key: string }).key;
    const answer = await ask(
      `POST http://127.0.0.1:${port}/api/v1/keys/${key}/deactivate HTTP/1.1\r\nHost: x\r\n` +
        `Connection: close\r\nContent-Length: 0\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`,
    );
    expect(answer.status).toBe(200);
    check('POST', `/api/v1/keys/${key}/deactivate`, answer);
  });

  it('handles a request with an Expect it does not know as any other (no 417)', async () => {
    const answer = await ask(
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
        `Expect: something-else\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`,
    );
    expect(answer).toMatchObject({ status: 200, body: { status: 'healthy' } });
    check('GET', '/api/v1/health', answer);
  });

  it('answers CONNECT as a method the path lacks: 405 with Allow, or 404', async () => {
    const known = await ask('CONNECT /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(known).toMatchObject({
      status: 405,
      headers: { allow: 'GET, HEAD', 'x-request-id': expect.any(String) },
      body: { detail: 'Method Not Allowed', request_id: known.headers['x-request-id'] },
    });
    check('CONNECT', '/api/v1/health', known);
    const proxy = await ask('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(proxy).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    check('CONNECT', '/', proxy);
    // The server still answers afterwards.
    expect((await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY)).status).toBe(
      200,
    );
  });

  it("closes a CONNECT's socket that the client keeps half open, within seconds", async () => {
    const server = app.app.getHttpServer() as Server;
    const serverSide = new Promise<Socket>((resolve) =>
      server.once('connect', (_request: unknown, socket: Socket) => resolve(socket)),
    );
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () =>
      socket.write('CONNECT /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n'),
    );
    try {
      const head = await new Promise<string>((resolve) =>
        socket.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))),
      );
      expect(head).toMatch(/^HTTP\/1\.1 405 /);
      // The server's side goes, although this client never closes its own.
      const started = Date.now();
      const ours = await serverSide;
      if (!ours.destroyed) await new Promise((resolve) => ours.once('close', resolve));
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      socket.destroy();
    }
  });
});
