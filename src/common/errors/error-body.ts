import type { Request, Response } from 'express';
import { requestId } from '../logging/logging.module';
import { secretScannerOf } from '../security/secrets';

/**
 * The request id to put in an error body: the one `requestLogging` (the first middleware, see
 * app.setup.ts) gave the request and sent as `X-Request-Id`, so the header and the body agree.
 * Assigned here the same way should an error ever be answered without that middleware.
 */
export function requestIdOf(request: Request, response: Response): string {
  const known = request.id;
  if (typeof known === 'string' || typeof known === 'number') return String(known);
  const id = requestId(request, response, secretScannerOf(request));
  request.id = id;
  return id;
}

/**
 * Every error body: `detail` (a text, or the 422 list) and the request's id beside it. Error
 * texts may quote what the client sent (an id, a parser's message): any secret in them is
 * replaced first.
 */
export function sendError(
  request: Request,
  response: Response,
  status: number,
  body: { detail: unknown },
): void {
  // A cache directive set for the success (`no-store` by @Header before a pipe refused the
  // body, a download's `private, no-cache`) is not the error's: no error answer carries one.
  response.removeHeader('Cache-Control');
  const scanner = secretScannerOf(request);
  const detail = scrubDeep(body.detail, (text) => scanner.scrub(text));
  response.status(status).json({ ...body, detail, request_id: requestIdOf(request, response) });
}

function scrubDeep(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, scrub));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [scrub(key), scrubDeep(item, scrub)]),
    );
  return value;
}
