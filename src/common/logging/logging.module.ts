import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { LoggerModule, Params } from 'nestjs-pino';
import { destination, type DestinationStream } from 'pino';
import type PinoPretty from 'pino-pretty';
import { AppConfig } from '../../config/app-config';
import { loadWhenUsed } from '../load-when-used';
import { APP_CONFIG } from '../../config/config.module';
import { SecretScanner } from '../security/secret-scanner';
import { secretScannerFor, secretScannerOf } from '../security/secrets';
import { redactUrl } from './redact-url';

/** The X-Request-Id values honoured; anything else is replaced by a new UUID. */
export const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/;

/**
 * Honours a sane incoming X-Request-Id (from a load balancer), else makes one; echoes it back.
 * An id that holds a secret (a client's mistake, or a probe) is replaced: ids are logged and
 * returned in error bodies.
 */
export function requestId(
  request: IncomingMessage,
  response: ServerResponse,
  scanner: SecretScanner,
): string {
  const incoming = request.headers['x-request-id'];
  const sane =
    typeof incoming === 'string' &&
    REQUEST_ID_PATTERN.test(incoming) &&
    !scanner.contains(incoming);
  const id = sane ? incoming : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/**
 * Express middleware installed first (app.setup.ts): gives the request its id before anything
 * can answer it, the body parser included. pino-http then keeps `req.id` as it is.
 */
export function assignRequestId(request: Request, response: Response, next: NextFunction): void {
  request.id ??= requestId(request, response, secretScannerOf(request));
  next();
}

/**
 * How long a log line may wait in the buffer of stdout: at most this, or until 4 KiB (about 15
 * request lines) have gathered. Writing each line on its own cost a system call per request,
 * the largest single cost of a request's logging. The buffer is flushed on exit.
 */
const LOG_FLUSH_MS = 100;
const LOG_BUFFER_BYTES = 4096;

/**
 * JSON lines (pino) in production and tests; in development, pino-pretty's human-readable
 * single lines, formatted in process (so a test can capture them). pino-pretty is a development
 * dependency (pruned from the production image), so it is loaded only then; without it the
 * output stays JSON.
 */
function destinationFor(config: AppConfig): DestinationStream {
  const jsonLines = () =>
    config.logDestination ??
    destination({ dest: 1, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
  if (config.nodeEnv !== 'development') return jsonLines();
  let pretty: typeof PinoPretty;
  try {
    pretty = loadWhenUsed<typeof PinoPretty>('pino-pretty');
  } catch {
    process.stderr.write('pino-pretty is not installed: logging JSON lines\n');
    return jsonLines();
  }
  return pretty({
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    destination: config.logDestination ?? 1,
  });
}

function loggerParams(config: AppConfig): Params {
  const scanner = secretScannerFor(config);
  const options: NonNullable<Params['pinoHttp']> = {
    level: config.logLevel,
    genReqId: (request, response) => requestId(request, response, scanner),
    // The last line of defence: every line is scanned as written, and a token holding a secret
    // (in any encoding: see SecretScanner) is replaced, whatever put it there (an error message
    // quoting input, a stack trace, a future log call).
    hooks: { streamWrite: (line) => scanner.scrub(line) },
    // Every line logged while handling a request carries `req` (id, method, redacted url): the
    // request-scoped logger of nestjs-pino. Headers and bodies are never serialized, so keys,
    // tokens and the bodies of key requests (which hold new keys) never reach the log; the
    // redaction is a second line of defence should a header ever be logged.
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
    // Applied to the request and response themselves (not to pino-http's copies of them, which
    // copy every header first): a line carries the request's id, method and redacted URL, and
    // the response's status. Response headers are left out: the same dozen on every response,
    // they made each line three times as long (and every line is scanned for secrets).
    wrapSerializers: false,
    serializers: {
      req: (req: Request) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.originalUrl ?? req.url, scanner),
      }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
    customSuccessMessage: (req, res, time) =>
      `${req.method} ${redactUrl(req.url, scanner)} ${res.statusCode} ${Math.round(time)}ms`,
    customErrorMessage: (req, res) =>
      `${req.method} ${redactUrl(req.url, scanner)} ${res.statusCode} failed`,
  };
  return { pinoHttp: [options, destinationFor(config)] };
}

@Module({
  imports: [LoggerModule.forRootAsync({ inject: [APP_CONFIG], useFactory: loggerParams })],
})
export class LoggingModule {}
