import type { Request, Response } from 'express';
import { requestId } from '../logging/logging.module';

/**
 * The request id to put in an error body: the one pino-http gave the request (and sent as
 * `X-Request-Id`). Errors raised before pino-http ran (the JSON body parser runs first) get one
 * assigned here, the same way, so the header and the body always agree.
 */
export function requestIdOf(request: Request, response: Response): string {
  const known = (request as { id?: unknown }).id;
  if (typeof known === 'string' || typeof known === 'number') return String(known);
  const sent = response.getHeader('X-Request-Id');
  if (typeof sent === 'string') return sent;
  const id = requestId(request, response);
  (request as { id?: unknown }).id = id;
  return id;
}

/** Every error body: `detail` (a text, or the 422 list) and the request's id beside it. */
export function sendError(
  request: Request,
  response: Response,
  status: number,
  body: { detail: unknown },
): void {
  response.status(status).json({ ...body, request_id: requestIdOf(request, response) });
}
