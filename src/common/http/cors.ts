import type { ServerResponse } from 'node:http';
import type {
  CorsOptions,
  CorsOptionsDelegate,
} from '@nestjs/common/interfaces/external/cors-options.interface';
import type { Request } from 'express';
import type { AllowedMethods } from '../errors/all-exceptions.filter';
import { RATE_LIMIT_HEADER_NAMES } from '../throttling/rate-limit-headers';

/**
 * What a browser client may read beyond the safelisted headers: every header the document gives a
 * response (the e2e CORS test holds this list to it) but `WWW-Authenticate`, which says nothing
 * the `detail` does not (docs/decisions.md, "Every 401 carries `WWW-Authenticate`"): the rate
 * limits, the request id, list totals, an aggregate's age, source and version, a submission's
 * commitment, what a dataset download is checked and named by (its SHA-256, its ETag for a
 * conditional fetch, its file name) and that it has no ranges, and a statistics answer's ETag.
 */
const EXPOSED_HEADERS = [
  ...RATE_LIMIT_HEADER_NAMES,
  'X-Request-Id',
  'X-Total-Count',
  'Age',
  'X-Aggregate-Computed-At',
  'X-Aggregate-Source',
  'X-Aggregate-Version',
  'X-Commitment-Block',
  'X-Commitment-Sha',
  'X-Vote-Published',
  'X-Content-SHA256',
  'ETag',
  'Content-Disposition',
  'Accept-Ranges',
];

/**
 * The request headers a preflight allows, the same on every path (the e2e CORS test holds this
 * list to the document): the key and the metrics token, a JSON body's type, the conditional
 * headers of a dataset download and a task (a statistics answer's If-None-Match among them),
 * and a request id of the caller's own.
 */
const ALLOWED_REQUEST_HEADERS = [
  'X-API-Key',
  'Authorization',
  'Content-Type',
  'If-None-Match',
  'If-Modified-Since',
  'If-Match',
  'If-Unmodified-Since',
  'X-Request-Id',
];

/**
 * The cors package's options, request by request. Left to itself it ends every OPTIONS request
 * with a 204 offering every method: an OPTIONS that is no preflight, or one for a path no
 * operation has, lost its documented 404/405. A preflight (an OPTIONS with `Origin` and
 * `Access-Control-Request-Method`, the Fetch standard's) is answered only from a listed origin
 * for a method the path has, offering the path's methods (those of its 405's `Allow`); any
 * other OPTIONS request goes on without CORS headers to the 404 or the 405 every request gets
 * (docs/decisions.md, "CORS preflights").
 */
export function corsOptions(
  origins: readonly string[],
  allowedMethods: AllowedMethods,
): CorsOptionsDelegate<Request> {
  const actual: CorsOptions = { origin: [...origins], exposedHeaders: EXPOSED_HEADERS };
  return (request, callback) => {
    if (request.method !== 'OPTIONS') return callback(null, actual);
    const origin = request.headers.origin;
    const method = request.headers['access-control-request-method'];
    const methods = allowedMethods(request.path);
    const answered =
      origin !== undefined && origins.includes(origin) && methods.includes(method ?? '');
    callback(
      null,
      answered
        ? { origin, methods, allowedHeaders: ALLOWED_REQUEST_HEADERS }
        : // The cors package passes a request on untouched when it has no origin to allow.
          { origin: false },
    );
  };
}

/**
 * The CORS headers the cors package gave `response` (its origin's `Access-Control-*` and
 * `Vary`), for an answer to its request written on the socket instead (client-errors.ts): a
 * browser's script reads that answer only with them. None when CORS is off or the origin is not
 * listed.
 */
export function corsHeadersOf(response: ServerResponse): Record<string, string> {
  const headers: Record<string, string> = {};
  // By lower-case name (HTTP's header names are not case-sensitive).
  for (const name of response.getHeaderNames()) {
    if (!name.startsWith('access-control-') && name !== 'vary') continue;
    const value = response.getHeader(name)!;
    headers[name] = Array.isArray(value) ? value.join(', ') : `${value}`;
  }
  return headers;
}
