import { bytesOfRun, isUtf8Run } from '../percent-escapes';
import type { NextFunction, Request, Response } from 'express';

/**
 * Express answers a path parameter with a broken percent-encoding (`%zz`, `%E0%A4%A`, an
 * encoded lone surrogate) with an error before any route runs. FastAPI decodes such paths
 * leniently (invalid bytes become U+FFFD) and routes them as usual, so a bad id is a 404 and a
 * bad source a 422: this repairs the path the same way before routing. The query string is
 * left alone (its parser is already lenient).
 */
export function repairPathEncoding(
  request: Request,
  _response: Response,
  next: NextFunction,
): void {
  const queryAt = request.url.indexOf('?');
  const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
  if (path.includes('%')) {
    const repaired = repairPercentEncoding(path);
    if (repaired !== path)
      request.url = repaired + (queryAt === -1 ? '' : request.url.slice(queryAt));
  }
  next();
}

/** Replaces invalid UTF-8 with U+FFFD (it is not `fatal` by default). */
const UTF8 = new TextDecoder();

function repairPercentEncoding(path: string): string {
  return path.replace(/%(?![0-9a-f]{2})/gi, '%25').replace(/(?:%[0-9a-f]{2})+/gi, (run) =>
    // Checked first rather than by catching decodeURIComponent's URIError, an exception per
    // run: a path of 4,000 runs of `%ff` cost tens of milliseconds before authentication.
    isUtf8Run(run) ? run : encodeURIComponent(UTF8.decode(bytesOfRun(run))),
  );
}
