import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationRequiredException } from '../auth/authentication-required';
import { DatabaseOutageLog } from '../database-outage-log';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../database-unavailable';
import { requestIdOf, sendError } from './error-body';
import { ReportException } from './report-exception';
import { ERROR_DETAILS } from './error-details';
import { withOtherParameters } from './parameter-validations';
import { RequestValidationException } from './validation-error-item';

/** The methods some route has for a path (HEAD wherever GET is); none: no route has the path. */
export type AllowedMethods = (path: string) => string[];

/**
 * The single place that shapes error responses: `{"detail": "...", "request_id": "..."}` for
 * ordinary errors, the 422 list for validation (built by RequestValidationException, every
 * refused parameter's joined in one: parameter-validations.ts), a 503 with
 * Retry-After when Postgres cannot be reached or no pooled connection frees up in time, and a bare
 * 500 for anything unexpected; the error goes to the log under the request id (its class, message,
 * code, stack and a failed query's text, never the query's parameters: logging/logged-error.ts),
 * never to the client. `allowedMethods` tells a path no route has (404) from one asked with a
 * method it lacks (405 with `Allow`, as FastAPI answers). The 503s for the database are logged
 * by `outages`, at most one line per 10 s however many requests meet the outage.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AllExceptionsFilter.name);

  constructor(
    private readonly allowedMethods: AllowedMethods = () => [],
    private readonly outages = new DatabaseOutageLog(),
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    // A parameter's refusal waits for the request's other parameters, so that one 422 lists
    // every location's errors, as FastAPI's does (parameter-validations.ts).
    const joined =
      exception instanceof RequestValidationException ? withOtherParameters(exception) : undefined;
    if (joined) void joined.then((refusal) => this.answer(refusal, host));
    else this.answer(exception, host);
  }

  private answer(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<Request>();
    const response = context.getResponse<Response>();
    if (response.headersSent) return this.breakOff(exception, request, response);

    if (exception instanceof ReportException) {
      response.status(exception.getStatus()).json(exception.getResponse());
      return;
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const allowed = isUnrouted(exception) ? this.allowedMethods(request.path) : [];
      if (allowed.length > 0) {
        response.setHeader('Allow', allowed.join(', '));
        sendError(request, response, HttpStatus.METHOD_NOT_ALLOWED, {
          detail: ERROR_DETAILS.methodNotAllowed,
        });
        return;
      }
      const retryAfter = (exception as { retryAfterSeconds?: unknown }).retryAfterSeconds;
      if (typeof retryAfter === 'number') response.setHeader('Retry-After', String(retryAfter));
      if (exception instanceof AuthenticationRequiredException)
        response.setHeader('WWW-Authenticate', exception.challenge);
      sendError(request, response, status, httpExceptionBody(exception));
      return;
    }
    const refusal = exposedClientError(exception);
    if (refusal) {
      // Any library's exposed 4xx, the docs files' `send` the one known: the headers it set for
      // the file go (the answer is JSON now), but a 416's Content-Range (`bytes */<size>`), as
      // RFC 9110 asks. An app header set before (ETag, Cache-Control) goes too; such an error
      // brings no Allow or WWW-Authenticate of its own.
      for (const header of ENTITY_HEADERS) response.removeHeader(header);
      if (refusal.status !== 416) response.removeHeader('Content-Range');
      sendError(request, response, refusal.status, { detail: refusal.message });
      return;
    }
    if (isDatabaseUnavailable(exception)) {
      this.outages.unavailable((exception as Error).message, requestIdOf(request, response));
      response.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      sendError(request, response, HttpStatus.SERVICE_UNAVAILABLE, {
        detail: ERROR_DETAILS.databaseUnavailable,
      });
      return;
    }
    this.logger.error(
      { err: exception, request_id: requestIdOf(request, response) },
      'unhandled error',
    );
    sendError(request, response, HttpStatus.INTERNAL_SERVER_ERROR, {
      detail: ERROR_DETAILS.internalError,
    });
  }

  /**
   * An error once the status line went out can no longer be answered: the connection is
   * destroyed, so the client sees a body cut short (no final chunk, or fewer bytes than its
   * Content-Length) rather than one that hangs, or looks complete if it were ended here. No
   * route throws so today (the dataset download breaks off its own stream); logged once, here.
   */
  private breakOff(exception: unknown, request: Request, response: Response): void {
    this.logger.error(
      { err: exception, request_id: requestIdOf(request, response) },
      'error after the response head was sent: connection closed',
    );
    response.destroy();
  }
}

/** What `send` sets for a file before it judges the request's Range and preconditions. */
const ENTITY_HEADERS = [
  'Content-Type',
  'Content-Length',
  'ETag',
  'Last-Modified',
  'Cache-Control',
  'Accept-Ranges',
];

/**
 * A client's error raised by a library as http-errors shapes it (a 4xx `status` and `expose`),
 * not as an HttpException: the static handler under the docs path refuses an unsatisfiable
 * Range (416) or a failed If-Match (412) so. Unrecognized, each was a 500 and an ERROR line with
 * a stack, from requests anyone may send without a key (an HTTP audit).
 */
function exposedClientError(exception: unknown): { status: number; message: string } | undefined {
  if (typeof exception !== 'object' || exception === null) return undefined;
  const { status, expose, message } = exception as {
    status?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  if (expose !== true || typeof status !== 'number' || status < 400 || status > 499)
    return undefined;
  return { status, message: typeof message === 'string' ? message : String(status) };
}

function httpExceptionBody(exception: HttpException): { detail: unknown } {
  const body = exception.getResponse();
  if (typeof body === 'object' && body !== null && 'detail' in body) return body;
  if (isUnrouted(exception)) return { detail: ERROR_DETAILS.notFound };
  return { detail: exception.message };
}

/** Nest's answer to a request no route took: a 404 "Cannot GET /x". */
function isUnrouted(exception: HttpException): boolean {
  return exception.getStatus() === 404 && exception.message.startsWith('Cannot ');
}
