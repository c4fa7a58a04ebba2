import { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import { ExpressServerAdapter } from './express-server-adapter';

@Controller()
class PingController {
  @Get('ping')
  ping(): { pong: true } {
    return { pong: true };
  }
}

@Module({ controllers: [PingController] })
class PingModule {}

/** The prototypes of a request and its response as the HTTP server made them, before Express. */
interface AtBirth {
  request: object | null;
  response: object | null;
}

async function requestOnce(
  adapter: ExpressAdapter,
  options: { forceCloseConnections?: boolean } = {},
): Promise<{ app: INestApplication; express: Express; atBirth: AtBirth; body: unknown }> {
  const app = await NestFactory.create(PingModule, adapter, { logger: false, ...options });
  await app.init();
  const server = app.getHttpServer() as Server;
  const atBirth: AtBirth = { request: null, response: null };
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    atBirth.request = Object.getPrototypeOf(request) as object;
    atBirth.response = Object.getPrototypeOf(response) as object;
  });
  await app.listen(0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  const body: unknown = await (await fetch(`http://127.0.0.1:${port}/ping`)).json();
  return { app, express: adapter.getInstance<Express>(), atBirth, body };
}

describe(ExpressServerAdapter.name, () => {
  it('makes requests and responses with the app’s Express prototypes, and answers as usual', async () => {
    const { app, express, atBirth, body } = await requestOnce(new ExpressServerAdapter());
    try {
      expect(atBirth.request).toBe(express.request);
      expect(atBirth.response).toBe(express.response);
      // Still Express's and Node's, with the app's own properties.
      expect(express.request).toBeInstanceOf(IncomingMessage);
      expect(express.response).toBeInstanceOf(ServerResponse);
      expect((express.response as { json?: unknown }).json).toBeInstanceOf(Function);
      expect((express.request as { app?: unknown }).app).toBe(express);
      expect(body).toEqual({ pong: true });
    } finally {
      await app.close();
    }
  });

  it('differs from Nest’s own adapter, whose server makes plain Node objects', async () => {
    const { app, atBirth, body } = await requestOnce(new ExpressAdapter());
    try {
      expect(atBirth.request).toBe(IncomingMessage.prototype);
      expect(atBirth.response).toBe(ServerResponse.prototype);
      expect(body).toEqual({ pong: true });
    } finally {
      await app.close();
    }
  });

  it('keeps Nest’s own server for forceCloseConnections', async () => {
    const options = { forceCloseConnections: true };
    const { app, atBirth } = await requestOnce(new ExpressServerAdapter(), options);
    try {
      expect(atBirth.request).toBe(IncomingMessage.prototype);
    } finally {
      await app.close();
    }
  });
});
