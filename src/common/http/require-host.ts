import type { NextFunction, Request, Response } from 'express';
import { sendError } from '../errors/error-body';
import { ERROR_DETAILS } from '../errors/error-details';

/**
 * RFC 9112 (3.2): a server answers an HTTP/1.1 request without `Host`, and any request with more
 * than one Host line, with a 400. Node's server did the first itself, with an empty body and no
 * request id (found by an audit); it no longer does (client-errors.ts), so that this answers it
 * in the documented shape, logged and counted as every answer is. Node keeps the first of two
 * Host lines and dropped the other unsaid (a connection-level audit): which host a proxy in
 * front routed by is then not known. HTTP/1.0 has no Host to require. The connection is closed,
 * as Node closed it.
 */
export function requireHost(request: Request, response: Response, next: NextFunction): void {
  const host = request.headers.host;
  if (host === undefined ? request.httpVersion !== '1.1' : hostLines(request.rawHeaders) === 1)
    return next();
  response.setHeader('Connection', 'close');
  sendError(request, response, 400, { detail: ERROR_DETAILS.malformedRequest });
}

/** How many of the request's header lines are Host (`rawHeaders`: name, value, name, …). */
function hostLines(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index];
    if (name.length === 4 && name.toLowerCase() === 'host') count += 1;
  }
  return count;
}
