import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { Store, storage } from 'nestjs-pino/storage';
import type { Level, Logger } from 'pino';
import type { AuthenticatedRequest } from '../auth/api-key-principal';
import { statusSentBeforeClose, whenResponseDone } from '../response-done';
import { REDACTED, SecretScanner } from '../security/secret-scanner';
import { loggedAddress } from './logged-address';
import { requestId } from './logging.module';
import { redactUrl } from './redact-url';

/** What a log line says of a request: its id, method and redacted URL. Never headers or body. */
export interface LoggedRequest {
  id: string | undefined;
  method: string | undefined;
  url: string | undefined;
  /** The client's address, on a 401's line only (loggedAddress). */
  remoteAddress?: string;
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
 * Fields a route puts on its request's line (addToRequestLine), beside `key_id`: values it has
 * looked up, such as the task whose dataset was downloaded, which the URL's redaction may hide
 * (a task id of 15 characters or more is `[redacted]` there; an audit's finding: which keys
 * downloaded a dataset could not be told).
 */
interface RequestLineFields {
  requestLineFields?: Record<string, string>;
}

/**
 * Has the request's line carry `fields` (their values are still looked at by the secret
 * scanner: one holding a secret is `[redacted]`). Only for values the route has checked, not the
 * client's text as sent.
 */
export function addToRequestLine(request: object, fields: Record<string, string>): void {
  const holder = request as RequestLineFields;
  holder.requestLineFields = { ...holder.requestLineFields, ...fields };
}

/** The fields a route added (addToRequestLine), any secret in them redacted. */
function addedFields(request: IncomingMessage, scanner: SecretScanner): Record<string, string> {
  const added = (request as IncomingMessage & RequestLineFields).requestLineFields ?? {};
  return Object.fromEntries(
    Object.entries(added).map(([name, value]) => [
      name,
      scanner.contains(value) ? REDACTED : value,
    ]),
  );
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
 * (`key_id` once a key was admitted: its id as listed, or `master`; with the fields the route
 * added, addToRequestLine: a dataset download's `task_id` and `format`; with
 * `req.remoteAddress`, the client's address, on a 401's line and on the master key's);
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

/**
 * A 5xx is the operator's problem: `error`. A 4xx is the client's (a wrong path, a bad body, a
 * wrong key): `info`, as a 2xx, so that no client can fill the warnings and errors an operator
 * watches (docs/decisions.md, "Metrics and logs"). A close with no status sent is `info` too:
 * the client left.
 */
function levelOf(statusCode: number | null): Level {
  return statusCode !== null && statusCode >= 500 ? 'error' : 'info';
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
  const sent = answered ? statusCode : statusSentBeforeClose(response);
  const level = levelOf(sent);
  if (!requestLines.isLevelEnabled(level)) return;
  const req = loggedRequest(request, scanner);
  const responseTime = Math.round(milliseconds);
  const { apiKey, authFailure, refusedKeyId } = request as IncomingMessage & AuthenticatedRequest;
  // Which key was charged (its id as listed, or `master`), so a 429 or a heavy user can be found.
  const fields = {
    ...addedFields(request, scanner),
    req,
    res: { statusCode: sent },
    responseTime,
    key_id: apiKey?.id,
  };
  // The connection closed before the answer was complete (the client gave up, or the answer was
  // cut off): no status reached the client, unless one was sent before the close.
  if (!answered) {
    requestLines[level](
      fields,
      `${req.method} ${req.url} ${sent ?? '-'} closed before the answer was complete, after ${responseTime}ms`,
    );
    return;
  }
  // A refused key says why, and from where: which client is failing, and whether it is guessing
  // (wrong_key from one address) or misconfigured (missing_key, expired_key); a genuine key
  // refused (expired, deactivated) says which, by its id.
  if (statusCode === 401) {
    req.remoteAddress = loggedAddress((request as Request).ip, scanner);
    requestLines[level](
      { ...fields, key_id: refusedKeyId, auth_failure: authFailure },
      `${req.method} ${req.url} 401 ${responseTime}ms`,
    );
    return;
  }
  // Which limit refused it: a key's budget (the key is named: `key_id`), or the address's lockout
  // after failed authentications, which comes before any key is admitted (the address is named:
  // who is guessing). The two read alike without it (a log audit's finding).
  if (statusCode === 429) {
    if (!apiKey || apiKey.isMaster)
      req.remoteAddress = loggedAddress((request as Request).ip, scanner);
    requestLines[level](
      { ...fields, rate_limited: apiKey ? 'key_budget' : 'address_lockout' },
      `${req.method} ${req.url} 429 ${responseTime}ms`,
    );
    return;
  }
  // The master key's users are all `master`: its line names the client, so that a leaked key's
  // use can be traced to where it came from (an on-call audit's finding).
  if (apiKey?.isMaster) req.remoteAddress = loggedAddress((request as Request).ip, scanner);
  const outcome = statusCode >= 500 ? 'failed' : `${responseTime}ms`;
  requestLines[level](fields, `${req.method} ${req.url} ${statusCode} ${outcome}`);
}
