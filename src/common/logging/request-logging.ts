import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { Store, storage } from 'nestjs-pino/storage';
import type { Logger } from 'pino';
import type { AuthenticatedRequest } from '../auth/api-key-principal';
import { statusSentBeforeClose, whenResponseDone } from '../response-done';
import { SecretScanner } from '../security/secret-scanner';
import { requestId } from './logging.module';
import { redactUrl } from './redact-url';

/** What a log line says of a request: its id, method and redacted URL. Never headers or body. */
export interface LoggedRequest {
  id: string | undefined;
  method: string | undefined;
  url: string | undefined;
}

export function loggedRequest(request: IncomingMessage, scanner: SecretScanner): LoggedRequest {
  return redacted(unredacted(request), scanner);
}

/** The request as its lines name it, the URL not yet redacted: three strings, not the request. */
function unredacted(request: IncomingMessage): LoggedRequest {
  const { id, originalUrl } = request as Request;
  // Always a string: requestLogging gives every request its id first.
  return { id: id as string | undefined, method: request.method, url: originalUrl ?? request.url };
}

function redacted(request: LoggedRequest, scanner: SecretScanner): LoggedRequest {
  return { ...request, url: redactUrl(request.url, scanner) };
}

/**
 * The request scope of nestjs-pino's Logger: lines logged while handling a request carry `req`.
 * The child logger holding it is made on the first such line, not per request: most requests
 * log nothing but their completion line, and a child per request (pino-http's way) cost more
 * than everything else about logging.
 * The scope holds the request's id, method and URL, never the request: every timer, socket and
 * promise made while handling it keeps the scope, for as long as it lives (a keep-alive timer),
 * and held the request with its body and socket long after it was answered. Background work
 * armed during a request leaves the scope (`storage.exit`: see WriteBuffer), or its lines name
 * that request.
 */
class RequestScope implements Store {
  responseLogger?: Logger;
  private child?: Logger;
  private readonly request: LoggedRequest;

  constructor(
    private readonly root: Logger,
    request: IncomingMessage,
    private readonly scanner: SecretScanner,
  ) {
    this.request = unredacted(request);
  }

  get logger(): Logger {
    return (this.child ??= this.root.child({ req: redacted(this.request, this.scanner) }));
  }

  set logger(logger: Logger) {
    this.child = logger;
  }
}

/**
 * Express middleware, installed first (app.setup.ts): gives the request its id (requestId) before
 * anything can answer it, the body parser included, and writes one line (through `requestLines`:
 * see logging.module.ts) for every answered request, one the body parser refused included:
 * `{"req":{id,method,url},"res":{"statusCode"},"responseTime","key_id","msg":"GET /api/v1/health 200 3ms"}`
 * (`key_id` once a key was admitted: its id as listed, or `master`);
 * a 5xx says `failed` in place of the time. A connection closed before the answer was complete
 * says so, with the status sent before the close, if any (else `-`, and `statusCode` null).
 */
export function requestLogging(root: Logger, requestLines: Logger, scanner: SecretScanner) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = performance.now();
    request.id ??= requestId(request, response, scanner);
    whenResponseDone(response, (answered, statusCode) =>
      logCompletion(
        requestLines,
        scanner,
        request,
        response,
        answered,
        statusCode,
        performance.now() - started,
      ),
    );
    storage.run(new RequestScope(root, request, scanner), next);
  };
}

function logCompletion(
  requestLines: Logger,
  scanner: SecretScanner,
  request: IncomingMessage,
  response: ServerResponse,
  answered: boolean,
  statusCode: number,
  milliseconds: number,
): void {
  if (!requestLines.isLevelEnabled('info')) return;
  const req = loggedRequest(request, scanner);
  const responseTime = Math.round(milliseconds);
  // Which key was charged (its id as listed, or `master`), so a 429 or a heavy user can be found.
  const keyId = (request as AuthenticatedRequest).apiKey?.id;
  // The connection closed before the answer was complete (the client gave up, or the answer was
  // cut off): no status reached the client, unless one was sent before the close.
  if (!answered) {
    const sent = statusSentBeforeClose(response);
    requestLines.info(
      { req, res: { statusCode: sent }, responseTime, key_id: keyId },
      `${req.method} ${req.url} ${sent ?? '-'} closed before the answer was complete, after ${responseTime}ms`,
    );
    return;
  }
  const outcome = statusCode >= 500 ? 'failed' : `${responseTime}ms`;
  requestLines.info(
    { req, res: { statusCode }, responseTime, key_id: keyId },
    `${req.method} ${req.url} ${statusCode} ${outcome}`,
  );
}
