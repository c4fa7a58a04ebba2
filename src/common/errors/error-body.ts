import type { Request, Response } from 'express';
import { requestId } from '../logging/logging.module';

/**
 * The request id to put in an error body: the one `assignRequestId` (the first middleware, see
 * app.setup.ts) gave the request and sent as `X-Request-Id`, so the header and the body agree.
 * Assigned here the same way should an error ever be answered without that middleware.
 */
export function requestIdOf(request: Request, response: Response): string {
  const known = request.id;
  if (typeof known === 'string' || typeof known === 'number') return String(known);
  const id = requestId(request, response);
  request.id = id;
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
