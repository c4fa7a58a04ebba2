import type { AddressInfo } from 'node:net';
import { Controller, Get, Module, Res } from '@nestjs/common';
import type { Response } from 'express';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { ConfigModule } from '../../config/config.module';
import { LoggingModule, REQUEST_LINE_LOGGER, ROOT_LOGGER } from '../logging/logging.module';
import { requestLogging } from '../logging/request-logging';
import { secretScannerFor } from '../security/secrets';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { ERROR_DETAILS } from './error-details';
import { LogCapture } from '../../../test/support/log-capture';
import { testConfig } from '../../../test/support/test-config';

type LogLine = { msg?: string; err?: { message?: string }; req?: { id?: string }; res?: unknown };

/** What a key's hash looks like: 64 hex digits. */
const KEY_HASH = 'c0ffee'.padEnd(64, '42');
const KEY_NAME = 'a name a client chose';
const INSERT = 'INSERT INTO "api_keys"("name", "key_hash") VALUES ($1, $2)';

@Controller()
class FailingController {
  @Get('boom')
  boom(): never {
    throw new Error('boom for the log');
  }

  /** An error pino's serializer cannot read (it tags every error it reads). */
  @Get('frozen')
  frozen(): never {
    const error = new Error('frozen for the log');
    Object.freeze(error);
    throw error;
  }

  /** A failed insert as TypeORM reports it: pg's error, and the query with its parameters. */
  @Get('query-failure')
  queryFailure(): never {
    const driverError = new DatabaseError(
      'value too long for type character varying(100)',
      0,
      'error',
    );
    driverError.code = '22001';
    driverError.detail = `Failing row contains (${KEY_NAME}, ${KEY_HASH}).`;
    throw new QueryFailedError(INSERT, [KEY_NAME, KEY_HASH], driverError);
  }

  /** Postgres out of reach, as pg reports a refused connection. */
  @Get('no-database')
  noDatabase(): never {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:55439'), {
      code: 'ECONNREFUSED',
    });
  }

  /** An error once the status line and part of the body are on the wire. */
  @Get('half-sent')
  async halfSent(@Res() response: Response): Promise<never> {
    response.status(200).setHeader('Content-Type', 'application/json');
    await new Promise((written) => response.write('{"items": [', written));
    throw new Error('failed after the head');
  }
}

/**
 * An unexpected error while handling a request, through the app's request logging and its
 * exception filter, as app.setup.ts wires them (moved from the logging e2e suite, which could
 * only provoke a 500 by faking a service).
 */
describe(`${AllExceptionsFilter.name} and the request logging`, () => {
  const capture = new LogCapture();
  let app: NestExpressApplication;
  let url: string;

  beforeAll(async () => {
    const config = testConfig({
      nodeEnv: 'test',
      logLevel: 'info',
      logDestination: capture,
      masterKey: 'sk_master_unit_filter_0123456789',
    });
    @Module({
      imports: [ConfigModule.forRoot(config), LoggingModule],
      controllers: [FailingController],
    })
    class FailingModule {}
    app = await NestFactory.create<NestExpressApplication>(FailingModule, { bufferLogs: true });
    app.useLogger(app.get(Logger));
    const scanner = secretScannerFor(config);
    app.use(requestLogging(app.get(ROOT_LOGGER), app.get(REQUEST_LINE_LOGGER), scanner));
    app.useGlobalFilters(new AllExceptionsFilter());
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  it('answers a bare 500 and logs the error under the request id, beside the request line', async () => {
    const response = await fetch(`${url}/boom`, {
      headers: { 'X-Request-Id': 'failing-request-7' },
    });

    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toBe('failing-request-7');
    // The error stays in the log: the client learns nothing of it.
    expect(await response.json()).toEqual({
      detail: ERROR_DETAILS.internalError,
      request_id: 'failing-request-7',
    });
    const lines = capture.lines<LogLine>().filter((line) => line.req?.id === 'failing-request-7');
    // The filter's own line, logged through Nest's Logger while handling the request.
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'unhandled error',
        err: expect.objectContaining({ message: 'boom for the log' }),
      }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'GET /boom 500 failed' }));
    // Every line about a request names it.
    for (const line of capture.lines<LogLine>().filter((entry) => 'res' in entry || 'req' in entry))
      expect(typeof line.req?.id).toBe('string');
  });

  it('answers the documented 500 and logs an error that cannot be read as usual', async () => {
    // The serializer threw on it: the line logged the serializer's own TypeError in its place.
    const response = await fetch(`${url}/frozen`, { headers: { 'X-Request-Id': 'frozen-5' } });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      detail: ERROR_DETAILS.internalError,
      request_id: 'frozen-5',
    });
    const line = capture
      .lines<LogLine>()
      .find((entry) => entry.req?.id === 'frozen-5' && entry.err);
    expect(line?.err).toEqual(
      expect.objectContaining({ type: 'Error', message: 'frozen for the log', unreadable: true }),
    );
  });

  it("logs a failed query's class, message, code, stack and text, never its parameters", async () => {
    const response = await fetch(`${url}/query-failure`, {
      headers: { 'X-Request-Id': 'failing-query-3' },
    });
    expect(response.status).toBe(500);
    const line = capture
      .lines<LogLine>()
      .find((entry) => entry.req?.id === 'failing-query-3' && entry.err);
    expect(line?.err).toEqual({
      type: 'QueryFailedError',
      message: 'value too long for type character varying(100)',
      code: '22001',
      query: INSERT,
      stack: expect.stringMatching(/^QueryFailedError: value too long/),
    });
    // Neither the parameters nor pg's detail, which quotes them, anywhere in the log.
    expect(capture.text).not.toContain(KEY_HASH);
    expect(capture.text).not.toContain(KEY_NAME);
  });

  // Each 503 logged its own warning: 20 lines for 20 requests, a flood at hundreds a second.
  it('logs the first of many requests answered 503 for the database, not each', async () => {
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${url}/no-database`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
    }
    const warnings = capture
      .lines<LogLine>()
      .filter((line) => line.msg?.startsWith('database unavailable'));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        context: 'AllExceptionsFilter',
        msg: 'database unavailable: connect ECONNREFUSED 127.0.0.1:55439',
      }),
    ]);
  });

  // The filter returned without a word: the client held a 200 whose body never ended (or, had
  // it been ended, one that looked complete), and nothing was logged.
  it('breaks the connection of an error after the response head was sent, and logs it once', async () => {
    const response = await fetch(`${url}/half-sent`, {
      headers: { 'X-Request-Id': 'half-sent-9' },
      signal: AbortSignal.timeout(5000),
    });
    expect(response.status).toBe(200);
    // undici's word for a body whose connection closed before it ended (not the timeout's).
    await expect(response.text()).rejects.toThrow('terminated');
    const lines = capture
      .lines<LogLine>()
      .filter((line) => line.err?.message === 'failed after the head');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'error after the response head was sent: connection closed',
        req: expect.objectContaining({ id: 'half-sent-9' }),
      }),
    ]);
  });
});
