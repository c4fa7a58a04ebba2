import { Logger } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import express from 'express';
import { closeNow, exchange, listenOnLoopback, parse } from '../../../test/support/raw-http';
import { secretScannerFor } from '../security/secrets';
import { originForm } from './origin-form';
import { refuseMisplacedKeys } from './refuse-misplaced-secrets';

const ISSUED_KEY = `sk_live_${'Q'.repeat(43)}`;

describe(originForm.name, () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const app = express();
    app.use(originForm);
    app.use(refuseMisplacedKeys(secretScannerFor({ masterKey: 'master-key-origin-0123456789' })));
    app.use((request, response) => {
      response.json({ url: request.url, path: request.path, originalUrl: request.originalUrl });
    });
    server = createServer(app);
    port = await listenOnLoopback(server);
  });
  afterAll(() => closeNow(server));

  // Written by hand: HTTP clients send the origin form unless they talk to a proxy.
  const ask = async (target: string) =>
    parse(
      await exchange(port, (socket) =>
        socket.write(`POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
      ),
    );

  it('reads an absolute target as the path and query it names', async () => {
    await expect(ask(`http://127.0.0.1:${port}/api/v1/health?source=x`)).resolves.toMatchObject({
      status: 200,
      body: {
        url: '/api/v1/health?source=x',
        path: '/api/v1/health',
        originalUrl: '/api/v1/health?source=x',
      },
    });
    await expect(ask(`HTTPS://example.org`)).resolves.toMatchObject({ body: { url: '/' } });
    await expect(ask(`http://example.org?a=1`)).resolves.toMatchObject({ body: { url: '/?a=1' } });
  });

  it('lets the key to deactivate through in an absolute target, as in the origin form', async () => {
    const target = `/api/v1/keys/${ISSUED_KEY}/deactivate`;
    await expect(ask(`http://127.0.0.1:${port}${target}`)).resolves.toMatchObject({
      status: 200,
      body: { path: target },
    });
  });

  it('leaves an absolute target with userinfo as it came, a key in it refused', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const answer = await ask(`http://${ISSUED_KEY}@127.0.0.1/api/v1/health`);
    expect(answer.status).toBe(400);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });
});
