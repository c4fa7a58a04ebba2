import type { NextFunction, Request, Response } from 'express';
import { sendError } from './error-body';
import { ERROR_DETAILS } from './error-details';
import { jsonErrorPosition } from './json-error-position';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  body?: string;
  /** Where the error is, when the body is refused before it is parsed (for its depth). */
  position?: number;
}

/**
 * Express error middleware for what the JSON body parser rejects, which happens before Nest's
 * exception filters run: malformed JSON is a 422 `json_invalid` (as FastAPI answers), an
 * oversized body a 413, an unsupported charset a 415; each with its request id, like every error.
 */
// Express recognises error middleware by its four parameters, so `_next` must stay.
export function bodyParserErrorHandler(
  error: BodyParserError,
  req: Request,
  res: Response,
  _next: NextFunction,
): void {
  switch (error.type) {
    case 'entity.parse.failed':
      sendError(req, res, 422, {
        detail: [
          {
            loc: ['body', parsePosition(error)],
            msg: 'JSON decode error',
            type: 'json_invalid',
            ctx: { error: error.message },
          },
        ],
      });
      return;
    case 'entity.too.large':
      sendError(req, res, 413, { detail: ERROR_DETAILS.bodyTooLarge });
      return;
    case 'charset.unsupported':
    case 'encoding.unsupported':
      sendError(req, res, 415, { detail: ERROR_DETAILS.unsupportedEncoding });
      return;
    default: {
      const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 400;
      sendError(req, res, status, { detail: ERROR_DETAILS.malformedBody });
    }
  }
}

/**
 * Where the body stops being JSON, as FastAPI reports it (Python's json module's position): the
 * parser's message has none for some errors (`{"a":tru}`, `{"a":`), which read as 0. A body
 * refused for its depth, before parsing, brings its position (the bracket one level too deep).
 */
function parsePosition(error: BodyParserError): number {
  if (error.position !== undefined) return error.position;
  const position = typeof error.body === 'string' ? jsonErrorPosition(error.body) : undefined;
  if (position !== undefined) return position;
  const match = /position (\d+)/.exec(error.message);
  return match ? Number(match[1]) : 0;
}
