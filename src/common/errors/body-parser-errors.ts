import type { NextFunction, Request, Response } from 'express';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  body?: string;
}

/**
 * Express error middleware for what the JSON body parser rejects, which happens before Nest's
 * exception filters run: malformed JSON is a 422 `json_invalid` (as FastAPI answers), an
 * oversized body a 413, an unsupported charset a 415.
 */
// Express recognises error middleware by its four parameters, so `_next` must stay.
export function bodyParserErrorHandler(
  error: BodyParserError,
  _req: Request,
  res: Response,
  _next: NextFunction,
): void {
  switch (error.type) {
    case 'entity.parse.failed':
      res.status(422).json({
        detail: [
          {
            loc: ['body', parsePosition(error.message)],
            msg: 'JSON decode error',
            type: 'json_invalid',
            ctx: { error: error.message },
          },
        ],
      });
      return;
    case 'entity.too.large':
      res.status(413).json({ detail: 'Request body too large' });
      return;
    case 'charset.unsupported':
    case 'encoding.unsupported':
      res.status(415).json({ detail: 'Unsupported request body encoding' });
      return;
    default: {
      const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 400;
      res.status(status).json({ detail: 'Malformed request body' });
    }
  }
}

function parsePosition(message: string): number {
  const match = /position (\d+)/.exec(message);
  return match ? Number(match[1]) : 0;
}
