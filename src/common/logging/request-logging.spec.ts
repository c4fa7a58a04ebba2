import { once } from 'node:events';
import { createServer, request, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { storage } from 'nestjs-pino/storage';
import { pino } from 'pino';
import { sendAndLeave } from '../../../test/support/send-and-leave';
import { until } from '../../../test/support/until';
import type { ApiKeyPrincipal, AuthenticatedRequest } from '../auth/api-key-principal';
import { SecretScanner } from '../security/secret-scanner';
import { addToRequestLine, requestLogging } from './request-logging';

/** A line as written, parsed. */
interface LogLine {
  msg: string;
  req?: { id?: string; method?: string; url?: string; remoteAddress?: string };
}

/** A completion line, parsed. */
interface CompletionLine {
  msg: string;
  level: number;
  auth_failure?: string;
  req?: LogLine['req'];
  res: { statusCode: number | null };
  responseTime?: number;
  key_id?: string;
}

/** The lines a served app writes (completion lines and any a handler logs), parsed. */
function serve(
  routes: (app: express.Express) => void,
  settings: (app: express.Express) => void = () => undefined,
) {
  const lines: (CompletionLine & LogLine)[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const app = express();
  settings(app);
  app.use(requestLogging(logger, logger, new SecretScanner([], /sk_live_\w{20,}/, 28)));
  routes(app);
  const server: Server = createServer(app).listen(0, '127.0.0.1');
  return { lines, server };
}

/**
 * Whether `target` can be reached from `from` through property values (own ones, symbol-keyed
 * too; closures are not looked into).
 */
function reaches(from: unknown, target: object): boolean {
  const seen = new Set<unknown>();
  const waiting = [from];
  while (waiting.length > 0) {
    const value = waiting.pop();
    if (value === target) return true;
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null) continue;
    if (seen.has(value)) continue;
    seen.add(value);
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (descriptor && 'value' in descriptor) waiting.push(descriptor.value);
    }
  }
  return false;
}

/**
 * The first completion line, once written. A generous deadline: it comes within milliseconds,
 * but a loaded CI machine can stall for a second or more.
 */
const firstLine = (lines: CompletionLine[]) => until(() => Promise.resolve(lines[0]), 10_000, 10);

describe(requestLogging.name, () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('logs a request answered, with its status and time', async () => {
    const served = serve((app) => app.get('/ok', (_request, response) => void response.send('ok')));
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await fetch(`http://127.0.0.1:${port}/ok`).then((response) => response.text());
    const line = await firstLine(served.lines);
    expect(line.res).toEqual({ statusCode: 200 });
    expect(line.responseTime).toEqual(expect.any(Number));
    expect(line.msg).toMatch(/^GET \/ok 200 \d+ms$/);
  });

  // A dataset download names its task (a runbook audit): the fields a route adds are on its line,
  // beside the standard ones, which they cannot replace, and a secret in them is redacted.
  it('puts the fields a route added on its line, a secret in them redacted', async () => {
    const served = serve((app) =>
      app.get('/tasks/:id', (request, response) => {
        addToRequestLine(request, { task_id: request.params.id, format: 'parquet' });
        addToRequestLine(request, { res: 'not the status', leaked: `sk_live_${'a'.repeat(24)}` });
        response.send('ok');
      }),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await fetch(`http://127.0.0.1:${port}/tasks/watch-someone-long-id`).then((r) => r.text());
    const line = (await firstLine(served.lines)) as CompletionLine & Record<string, unknown>;
    expect(line).toMatchObject({
      task_id: 'watch-someone-long-id',
      format: 'parquet',
      leaked: '[redacted]',
      res: { statusCode: 200 },
    });
  });

  // The request scope lives on in every timer, socket and promise made while handling the
  // request (a buffered write flushed later, a keep-alive timer): holding the request there kept
  // it, its body and its socket in memory long after it was answered.
  it('keeps of the request in its scope only its id, method and URL', async () => {
    let scope: unknown;
    let received: express.Request | undefined;
    const served = serve((app) => {
      app.use(express.json());
      app.post('/scoped', (request, response) => {
        scope = storage.getStore();
        received = request;
        storage.getStore()?.logger.info('handling');
        response.send('ok');
      });
    });
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await fetch(`http://127.0.0.1:${port}/scoped?page=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'request-7' },
      body: JSON.stringify({ text: 'a body' }),
    }).then((response) => response.text());
    expect(scope).toBeDefined();
    expect(received?.body).toEqual({ text: 'a body' });
    for (const retained of [received, received?.body, received?.socket, received?.res])
      expect(reaches(scope, retained as object)).toBe(false);
    // What it keeps is enough for a handler's lines to name the request.
    await until(() => Promise.resolve(served.lines.length === 2 || undefined), 10_000, 10);
    expect(served.lines.find((line) => line.msg === 'handling')?.req).toEqual({
      id: 'request-7',
      method: 'POST',
      url: '/scoped?page=2',
    });
  });

  it('logs a request the client gave up on before any answer with no status', async () => {
    const served = serve((app) => app.get('/hang', () => undefined));
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    // The client leaves once the server has the request (the app's listener, with the logging
    // middleware, runs before this one): a fixed 100 ms was not always enough for it to arrive
    // on a loaded machine, and a request that never arrived is never logged.
    const arrived = once(server, 'request');
    const waiting = request({ host: '127.0.0.1', port, path: '/hang' });
    waiting.on('error', () => undefined);
    waiting.end();
    await arrived;
    waiting.destroy();
    const line = await firstLine(served.lines);
    expect(line.res).toEqual({ statusCode: null });
    expect(line.msg).toMatch(/^GET \/hang - closed before the answer was complete, after \d+ms$/);
  });

  // Which key a request was charged to, so that a client giving up under load can be found too.
  it('names the key charged on the line of a request whose client left', async () => {
    const served = serve((app) => {
      app.use((request, _response, next) => {
        (request as AuthenticatedRequest).apiKey = { id: 'key-7' } as ApiKeyPrincipal;
        next();
      });
      app.get('/hang', () => undefined);
    });
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await sendAndLeave(port, 'GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    const line = await firstLine(served.lines);
    expect(line).toMatchObject({ key_id: 'key-7', responseTime: expect.any(Number) });
    expect(line.msg).toMatch(/^GET \/hang - closed before the answer was complete/);
  });

  it('logs the status of an answer cut off after its head was sent', async () => {
    const served = serve((app) =>
      app.get('/partial', (_request, response) => void response.status(206).write('part')),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const waiting = request({ host: '127.0.0.1', port, path: '/partial' });
    waiting.on('error', () => undefined);
    waiting.on('response', (answer) => answer.once('data', () => waiting.destroy()));
    waiting.end();
    const line = await firstLine(served.lines);
    expect(line.res).toEqual({ statusCode: 206 });
    expect(line.msg).toMatch(/^GET \/partial 206 closed before the answer was complete/);
  });

  it('logs no status for a pipelined answer still queued when the client left', async () => {
    // The queued answer's head is written (headersSent) but waits behind the first answer, which
    // comes only once the client has gone: the client got neither.
    const served = serve((app) => {
      app.get('/slow', (request, response) =>
        request.socket.once('close', () => void response.send('slow')),
      );
      app.get('/queued', (_request, response) => void response.status(201).send('queued'));
    });
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await sendAndLeave(
      port,
      'GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /queued HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    await until(() => Promise.resolve(served.lines.length === 2 || undefined), 10_000, 10);
    expect(served.lines.map((line) => [line.msg.split(' ')[1], line.res.statusCode])).toEqual([
      ['/slow', null],
      ['/queued', null],
    ]);
  });

  // A 5xx is the operator's problem, a 4xx the client's: an error line per client mistake would
  // let any client fill the errors an operator watches.
  it('logs a 5xx answer at error and a 4xx or 2xx answer at info', async () => {
    const served = serve((app) => {
      app.get('/ok', (_request, response) => void response.send('ok'));
      app.get('/missing', (_request, response) => void response.status(404).send('no'));
      app.get('/down', (_request, response) => void response.status(503).send('down'));
      app.get('/broken', (_request, response) => void response.status(500).send('broken'));
    });
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    for (const path of ['/ok', '/missing', '/down', '/broken'])
      await fetch(`http://127.0.0.1:${port}${path}`).then((response) => response.text());
    await until(() => Promise.resolve(served.lines.length === 4 || undefined), 10_000, 10);
    const levels = Object.fromEntries(
      served.lines.map((line) => [line.msg.split(' ')[1], line.level]),
    );
    expect(levels).toEqual({ '/ok': 30, '/missing': 30, '/down': 50, '/broken': 50 });
  });

  it("says on a 401's line why it was refused and the client's address, never the key", async () => {
    const key = `sk_live_${'z'.repeat(43)}`;
    const served = serve((app) =>
      app.get('/guarded', (request, response) => {
        (request as AuthenticatedRequest).authFailure = 'wrong_key';
        response.status(401).send('no');
      }),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await fetch(`http://127.0.0.1:${port}/guarded`, { headers: { 'x-api-key': key } }).then(
      (response) => response.text(),
    );
    const line = await firstLine(served.lines);
    expect(line).toMatchObject({
      auth_failure: 'wrong_key',
      req: { url: '/guarded', remoteAddress: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/) },
    });
    expect(line).not.toHaveProperty('key_id');
    expect(JSON.stringify(line)).not.toContain(key);
  });

  it("names a genuine key refused (expired, deactivated) on the 401's line by its id", async () => {
    const served = serve((app) =>
      app.get('/guarded', (request, response) => {
        Object.assign(request, { authFailure: 'deactivated_key', refusedKeyId: 'k-123' });
        response.status(401).send('no');
      }),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await fetch(`http://127.0.0.1:${port}/guarded`).then((response) => response.text());
    expect(await firstLine(served.lines)).toMatchObject({
      auth_failure: 'deactivated_key',
      key_id: 'k-123',
    });
  });

  it("says which limit a 429 was, naming the key or, for the address's lockout, the address", async () => {
    const served = serve((app) =>
      app.get('/limited', (request, response) => {
        if (request.headers['x-as'] === 'key')
          (request as AuthenticatedRequest).apiKey = { id: 'key-7' } as ApiKeyPrincipal;
        if (request.headers['x-as'] === 'master')
          (request as AuthenticatedRequest).apiKey = {
            id: 'master',
            isMaster: true,
          } as ApiKeyPrincipal;
        response.status(429).send('slow down');
      }),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}/limited`;
    await fetch(url, { headers: { 'x-as': 'key' } }).then((response) => response.text());
    const budget = await firstLine(served.lines);
    expect(budget).toMatchObject({ key_id: 'key-7', rate_limited: 'key_budget' });
    expect(budget.req).not.toHaveProperty('remoteAddress');
    served.lines.length = 0;
    // The master key's lines name the address, its 429s too (a review's finding).
    await fetch(url, { headers: { 'x-as': 'master' } }).then((response) => response.text());
    expect(await firstLine(served.lines)).toMatchObject({
      key_id: 'master',
      rate_limited: 'key_budget',
      req: { remoteAddress: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/) },
    });
    served.lines.length = 0;
    await fetch(url).then((response) => response.text());
    expect(await firstLine(served.lines)).toMatchObject({
      rate_limited: 'address_lockout',
      req: { remoteAddress: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/) },
    });
  });

  it('names no address on the line of an answer other than a 401', async () => {
    const served = serve((app) => app.get('/ok', (_request, response) => void response.send('ok')));
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await fetch(`http://127.0.0.1:${port}/ok`).then((response) => response.text());
    const line = await firstLine(served.lines);
    expect(line.req).not.toHaveProperty('remoteAddress');
    expect(line).not.toHaveProperty('auth_failure');
  });

  // Every user of the master key is `master`: without the address, a leaked key's use during
  // its exposure could not be traced (an on-call audit's finding).
  it("names the client's address on the master key's lines, not on another key's", async () => {
    const served = serve((app) =>
      app.get('/admin', (request, response) => {
        const master = request.headers['x-as'] === 'master';
        (request as AuthenticatedRequest).apiKey = {
          id: master ? 'master' : '8f9c0b6e-0d0b-4a57-9d40-2a8e2c1f7d11',
          tier: 'validator',
          isMaster: master,
          rateLimit: null,
        };
        response.send('ok');
      }),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    for (const as of ['master', 'key'])
      await fetch(`http://127.0.0.1:${port}/admin`, { headers: { 'x-as': as } }).then((response) =>
        response.text(),
      );
    await until(() => Promise.resolve(served.lines.length === 2 || undefined), 10_000, 10);
    expect(served.lines.map((line) => line.req?.remoteAddress)).toEqual([
      expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/),
      undefined,
    ]);
  });

  // Behind a trusted proxy the address is read from X-Forwarded-For, text the proxy passed on:
  // request lines skip the secret scan, so only an address is written.
  it('writes the address behind a trusted proxy, and no text that is not an address', async () => {
    const served = serve(
      (app) =>
        app.get('/guarded', (request, response) => {
          (request as AuthenticatedRequest).authFailure = 'missing_key';
          response.status(401).send('no');
        }),
      (app) => app.set('trust proxy', 1),
    );
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const forwarded = ['203.0.113.7', '[2001:db8::1]:443', `sk_live_${'y'.repeat(43)}`];
    for (const address of forwarded)
      await fetch(`http://127.0.0.1:${port}/guarded`, {
        headers: { 'x-forwarded-for': address },
      }).then((response) => response.text());
    await until(() => Promise.resolve(served.lines.length === 3 || undefined), 10_000, 10);
    expect(served.lines.map((line) => line.req?.remoteAddress)).toEqual([
      '203.0.113.7',
      '[2001:db8::1]:443',
      'not an address',
    ]);
  });
});
