import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { Request, Response } from 'express';

/**
 * The single place that shapes error responses: `{"detail": "..."}` for ordinary errors, the
 * 422 list for validation (built by RequestValidationException), and a bare 500 carrying only
 * the request id for anything unexpected; the full error goes to the log, never to the client.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AllExceptionsFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<Request>();
    const response = context.getResponse<Response>();
    if (response.headersSent) return;

    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      response.status(status).json(httpExceptionBody(exception, status));
      return;
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(`database unavailable: ${(exception as Error).message}`);
      response
        .status(HttpStatus.SERVICE_UNAVAILABLE)
        .json({ detail: 'Database unavailable, try again shortly' });
      return;
    }
    const requestId =
      typeof request.id === 'string' || typeof request.id === 'number' ? String(request.id) : '';
    this.logger.error({ err: exception, request_id: requestId }, 'unhandled error');
    response
      .status(HttpStatus.INTERNAL_SERVER_ERROR)
      .json({ detail: 'Internal server error', request_id: requestId });
  }
}

function httpExceptionBody(exception: HttpException, status: number): object {
  const body = exception.getResponse();
  if (typeof body === 'object' && body !== null && 'detail' in body) return body;
  // Nest's own router answers unknown routes with "Cannot GET /x"; FastAPI says "Not Found".
  if (status === 404 && exception.message.startsWith('Cannot ')) return { detail: 'Not Found' };
  return { detail: exception.message };
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P03',
  '08000',
  '08003',
  '08006',
]);

function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code =
    (error as { code?: string }).code ??
    (error as { driverError?: { code?: string } }).driverError?.code;
  if (code && CONNECTION_ERROR_CODES.has(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Connection terminated unexpectedly/i.test(
    error.message,
  );
}
