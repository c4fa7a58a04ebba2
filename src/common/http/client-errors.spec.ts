import { once } from 'node:events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { LoggerService } from '@nestjs/common';
import { pino } from 'pino';
import { closeNow, exchange, listenOnLoopback, parse } from '../../../test/support/raw-http';
import { ERROR_DETAILS } from '../errors/error-details';
import { MetricsService } from '../metrics/metrics.service';
import { answerClientErrors, SocketAnswer, socketAnswerRecorder } from './client-errors';

/**
 * Tighter than the service's defaults, so that a slow client is answered within the test. Node
 * checks them once a second: the request's limit is over the headers' by more than that, so
 * the two answers cannot be mistaken for each other. An idle connection is closed after a second,
 * well before Node's own 5 s.
 */
const LIMITS = {
  headersTimeoutMs: 300,
  // Far above the headers' limit: at load 20 on two CPUs, a 408 for slow headers took 2.1 s.
  requestTimeoutMs: 4000,
  keepAliveTimeoutMs: 1000,
  bodyLimit: '1kb',
};

/** What the app would answer: the request it was handed, once its body is in. */
function echo(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  request.on('end', () => {
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify({ method: request.method, url: request.url }));
  });
}

const logger: LoggerService = {
  log: () => undefined,
  error: () => undefined,
  warn: () => undefined,
};
/** The app's routes: /items takes GET and POST; no other path is known. */
const allowedMethods = (path: string) => (path === '/items' ? ['GET', 'POST'] : []);

describe('answerClientErrors', () => {
  let server: Server;
  let port: number;
  /** What was recorded of each answer written on the socket, in order. */
  const recorded: SocketAnswer[] = [];

  beforeAll(async () => {
    server = createServer(echo);
    answerClientErrors(server, LIMITS, logger, allowedMethods, (answer) => recorded.push(answer));
    port = await listenOnLoopback(server);
  });
  afterAll(() => closeNow(server));

  const ask = (request: string) => exchange(port, (socket) => socket.write(request));

  /** The answer, checked to be whole: a body as long as it says, the id in both places. */
  async function answerTo(request: string) {
    const text = await ask(request);
    const answer = parse(text);
    const body = text.slice(text.indexOf('\r\n\r\n') + 4);
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': answer.body.request_id,
      // The connection cannot serve another request: the client must not wait for one.
      connection: 'close',
    });
    expect(answer.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    return answer;
  }

  it('answers a malformed request line with a 400 in the documented shape', async () => {
    const answer = await answerTo('GARBAGE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toBe(ERROR_DETAILS.malformedRequest);
  });

  it('answers oversized headers with a 431', async () => {
    const answer = await answerTo(
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.body.detail).toBe(ERROR_DETAILS.headersTooLarge);
  });

  // The client was given a request id no log line carried, and the answer was in no count (a
  // review's finding): each is recorded, with the parser's code, never the request's bytes.
  it('records each refused request under the id it was answered with, its method known or other', async () => {
    recorded.length = 0;
    const tooLarge = await answerTo(
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    const unknownMethod = await answerTo('M123 / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(recorded).toEqual([
      {
        id: tooLarge.body.request_id,
        method: 'GET',
        status: 431,
        parserError: 'HPE_HEADER_OVERFLOW',
      },
      {
        id: unknownMethod.body.request_id,
        method: 'other',
        status: 400,
        parserError: 'HPE_INVALID_METHOD',
      },
    ]);
  });

  it('records a client that ended its side mid-headers as having left, with no status', async () => {
    recorded.length = 0;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    try {
      await once(socket, 'connect');
      socket.end('POST /items HTTP/1.1\r\nHost: x\r\nContent-Le');
      socket.resume();
      await once(socket, 'end');
    } finally {
      socket.destroy();
    }
    expect(recorded).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        // The parser's end-of-stream error carries no bytes to read the method from.
        method: 'other',
        status: null,
        parserError: 'HPE_INVALID_EOF_STATE',
      },
    ]);
  });

  it('answers a HEAD with oversized headers with a 431 and no body, as HEAD answers are', async () => {
    const text = await ask(`HEAD / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(text).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    expect(text).toMatch(/\r\n\r\n$/);
  });

  it('answers a client too slow with its headers with a 408 within a second of their limit', async () => {
    const started = Date.now();
    const answer = await answerTo('GET / HTTP/1.1\r\nHost: x\r\n');
    expect(answer.status).toBe(408);
    // Node (18 and later) reports a headers timeout as the whole request's: one text.
    expect(answer.body.detail).toBe(ERROR_DETAILS.requestTimeout);
    // Node checks every second: well before the whole request's limit.
    expect(Date.now() - started).toBeLessThan(LIMITS.requestTimeoutMs - 1000);
  });

  it('gives a slow body the whole request limit, not the headers one, then answers a 408', async () => {
    const started = Date.now();
    const answer = await answerTo('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf');
    expect(answer.status).toBe(408);
    expect(answer.body.detail).toBe(ERROR_DETAILS.requestTimeout);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.requestTimeoutMs);
    expect(Date.now() - started).toBeLessThan(LIMITS.requestTimeoutMs + 2500);
  });

  it('closes a kept-alive connection once it has been idle its keep-alive timeout', async () => {
    const socket = connect(port, '127.0.0.1');
    try {
      await once(socket, 'connect');
      socket.write('GET /items HTTP/1.1\r\nHost: x\r\n\r\n');
      const [answer] = (await once(socket, 'data')) as [Buffer];
      expect(answer.toString('latin1')).toMatch(
        /^HTTP\/1\.1 200 [^]*\r\nKeep-Alive: timeout=1\r\n/,
      );
      const idleFrom = Date.now();
      await once(socket, 'close');
      // Node 20 waits a second past the timeout it announces: well before its own 5 s still.
      expect(Date.now() - idleFrom).toBeGreaterThanOrEqual(900);
      expect(Date.now() - idleFrom).toBeLessThan(3000);
    } finally {
      socket.destroy();
    }
  });

  it('hands an HTTP/1.1 request without Host to the app, which answers it (requireHost)', async () => {
    const text = await ask('GET /items HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(parse(text)).toMatchObject({ status: 200, body: { method: 'GET', url: '/items' } });
  });

  it('hands a request with an Expect it does not know to the app (no 417)', async () => {
    const text = await ask(
      'GET /items HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
    );
    expect(parse(text)).toMatchObject({ status: 200, body: { method: 'GET' } });
  });

  it('answers CONNECT to a known path, its query aside, with a 405 naming the methods', async () => {
    const answer = await answerTo('CONNECT /items?page=2 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, POST');
    expect(answer.body.detail).toBe(ERROR_DETAILS.methodNotAllowed);
  });

  it("answers CONNECT to a proxy's host:port with a 404", async () => {
    const answer = await answerTo('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n');
    expect(answer.status).toBe(404);
    expect(answer.body.detail).toBe(ERROR_DETAILS.notFound);
  });

  it('records a CONNECT it answered under the id it was answered with', async () => {
    recorded.length = 0;
    const answer = await answerTo('CONNECT /items HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(recorded).toEqual([{ id: answer.body.request_id, method: 'CONNECT', status: 405 }]);
  });
});

describe(socketAnswerRecorder.name, () => {
  /** The recorder over a logger writing into `lines` and a metrics registry of its own. */
  function recorder() {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info', base: undefined, timestamp: false },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const metrics = new MetricsService();
    return { record: socketAnswerRecorder(logger, metrics), lines, metrics };
  }

  it('logs a refused request at info with its id, status and the parser code, and counts it answered', async () => {
    const { record, lines, metrics } = recorder();
    record({ id: 'id-431', method: 'GET', status: 431, parserError: 'HPE_HEADER_OVERFLOW' });
    record({ id: 'id-405', method: 'CONNECT', status: 405 });
    expect(lines).toEqual([
      {
        level: 30,
        req: { id: 'id-431', method: 'GET' },
        res: { statusCode: 431 },
        parser_error: 'HPE_HEADER_OVERFLOW',
        msg: 'GET 431 refused by the HTTP parser (HPE_HEADER_OVERFLOW)',
      },
      {
        level: 30,
        req: { id: 'id-405', method: 'CONNECT' },
        res: { statusCode: 405 },
        msg: 'CONNECT 405 answered before routing',
      },
    ]);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'gateway_http_requests_total{method="GET",route="unmatched",status="431"} 1',
    );
    expect(text).toContain(
      'gateway_http_requests_total{method="CONNECT",route="unmatched",status="405"} 1',
    );
    expect(text).not.toMatch(/^gateway_http_request_duration_seconds_count\{/m);
  });

  it('logs and counts a client that left mid-request as unanswered, with no status', async () => {
    const { record, lines, metrics } = recorder();
    record({ id: 'id-left', method: 'other', status: null, parserError: 'HPE_INVALID_EOF_STATE' });
    expect(lines).toMatchObject([
      {
        res: { statusCode: null },
        msg: 'other - closed before the request was complete (HPE_INVALID_EOF_STATE)',
      },
    ]);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'gateway_http_requests_unanswered_total{method="other",route="unmatched"} 1',
    );
    expect(text).not.toMatch(/^gateway_http_requests_total\{/m);
  });
});
