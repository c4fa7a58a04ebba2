import type { NextFunction, Request, Response } from 'express';
import { sendError } from '../errors/error-body';
import { ERROR_DETAILS } from '../errors/error-details';

/**
 * RFC 9112 (3.2): a server answers an HTTP/1.1 request without `Host` with a 400. Node's server
 * did so itself, with an empty body and no request id (found by an audit); it no longer does
 * (client-errors.ts), so that this answers it in the documented shape, logged and counted as
 * every answer is. HTTP/1.0 has no Host to require. The connection is closed, as Node closed it.
 */
export function requireHost(request: Request, response: Response, next: NextFunction): void {
  if (request.headers.host !== undefined || request.httpVersion !== '1.1') return next();
  response.setHeader('Connection', 'close');
  sendError(request, response, 400, { detail: ERROR_DETAILS.malformedRequest });
}
