import { once } from 'node:events';
import { createServer, request, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { pino } from 'pino';
import { until } from '../../../test/support/until';
import { SecretScanner } from '../security/secret-scanner';
import { requestLogging } from './request-logging';

/** The completion lines a served app writes, parsed. */
function serve(routes: (app: express.Express) => void) {
  const lines: { msg: string; res: { statusCode: number | null } }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const app = express();
  app.use(requestLogging(logger, logger, new SecretScanner([], /sk_live_\w{20,}/, 28)));
  routes(app);
  const server: Server = createServer(app).listen(0, '127.0.0.1');
  return { lines, server };
}

/** The first completion line, once written. */
const firstLine = (lines: { msg: string; res: { statusCode: number | null } }[]) =>
  until(() => Promise.resolve(lines[0]), 2_000, 10);

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
    expect(line.msg).toMatch(/^GET \/ok 200 \d+ms$/);
  });

  it('logs a request the client gave up on before any answer with no status', async () => {
    const served = serve((app) => app.get('/hang', () => undefined));
    server = served.server;
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const waiting = request({ host: '127.0.0.1', port, path: '/hang' });
    waiting.on('error', () => undefined);
    waiting.end();
    await sleep(100);
    waiting.destroy();
    const line = await firstLine(served.lines);
    expect(line.res).toEqual({ statusCode: null });
    expect(line.msg).toMatch(/^GET \/hang - closed before the answer was complete, after \d+ms$/);
  });
});
