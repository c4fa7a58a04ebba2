import type { HeaderObject } from '@nestjs/swagger';
import { DATABASE_RETRY_AFTER_SECONDS } from '../database-unavailable';
import { ERROR_DETAILS } from './error-details';
import { ValidationErrorItem } from './validation-error-item';

/** One error an operation answers: its status and the `detail` of the body, as an example. */
export interface ErrorCase {
  status: number;
  /** The example's key in the document. */
  name: string;
  summary: string;
  /** Said beside the example in the document, when the summary is not enough. */
  description?: string;
  detail: string | ValidationErrorItem[];
  /**
   * Sent with `Retry-After`, these seconds in the document's example (a status other than 429,
   * where every case has it).
   */
  retryAfter?: number;
  /** Headers of its own it is sent with, documented on its status (the file's ETag on a 412). */
  headers?: Record<string, HeaderObject>;
}

/** An error of `status` sending `detail`, documented as the example `name`. */
export function errorCase(
  status: number,
  name: string,
  summary: string,
  detail: string,
  options: { retryAfter?: number; headers?: Record<string, HeaderObject> } = {},
): ErrorCase {
  return { status, name, summary, detail, ...options };
}

/** A 422 sending `items` (each as the service words it), documented as the example `name`. */
export function validationCase(
  name: string,
  summary: string,
  ...items: ValidationErrorItem[]
): ErrorCase {
  return { status: 422, name, summary, detail: items };
}

/** Errors many operations share, with the texts the service sends. */
export const ERROR_CASES = {
  misplacedKey: errorCase(
    400,
    'misplacedKey',
    'An issued key (sk_live_…) in the path or the query string, in any encoding: refused before ' +
      'authentication',
    ERROR_DETAILS.misplacedSecret,
  ),
  misplacedSecret: errorCase(
    400,
    'misplacedSecret',
    'An issued key in the body, or the master key or another configured secret outside the ' +
      'X-API-Key and Authorization headers, in any encoding: refused after authentication, the ' +
      'rate limit and the privilege check',
    ERROR_DETAILS.misplacedSecret,
  ),
  malformedBody: errorCase(
    400,
    'malformedBody',
    'A body that cannot be read',
    ERROR_DETAILS.malformedBody,
  ),
  malformedRequest: errorCase(
    400,
    'malformedRequest',
    'A request line or header Node’s HTTP parser cannot read, or an HTTP/1.1 request without Host',
    ERROR_DETAILS.malformedRequest,
  ),
  requestTimeout: errorCase(
    408,
    'requestTimeout',
    'The headers not all sent within HTTP_HEADERS_TIMEOUT_MS, or the whole request (its body ' +
      'included) within HTTP_REQUEST_TIMEOUT_MS',
    ERROR_DETAILS.requestTimeout,
  ),
  headersTooLarge: errorCase(
    431,
    'headersTooLarge',
    'The request line and headers over 16 KB',
    ERROR_DETAILS.headersTooLarge,
  ),
  missingKey: errorCase(401, 'missingKey', 'No X-API-Key header', ERROR_DETAILS.missingKey),
  keyInAuthorization: errorCase(
    401,
    'keyInAuthorization',
    'No X-API-Key header, but an Authorization header (Bearer <key>)',
    ERROR_DETAILS.keyInAuthorization,
  ),
  invalidKey: errorCase(401, 'invalidKey', 'Unknown or deactivated key', ERROR_DETAILS.invalidKey),
  keyExpired: errorCase(401, 'keyExpired', 'A key past its expires_at', ERROR_DETAILS.keyExpired),
  invalidMetricsToken: errorCase(
    401,
    'invalidMetricsToken',
    'A bearer token that is not METRICS_TOKEN',
    ERROR_DETAILS.invalidMetricsToken,
  ),
  needsValidatorKey: errorCase(
    403,
    'needsValidatorKey',
    'A regular key',
    ERROR_DETAILS.needsValidatorKey,
  ),
  needsMasterKey: errorCase(
    403,
    'needsMasterKey',
    'A key other than the master key',
    ERROR_DETAILS.needsMasterKey,
  ),
  needsMetricsAccess: errorCase(
    403,
    'needsMetricsAccess',
    'A key other than the master key',
    ERROR_DETAILS.needsMetricsAccess,
  ),
  bodyTooLarge: errorCase(
    413,
    'bodyTooLarge',
    'A body over BODY_LIMIT',
    ERROR_DETAILS.bodyTooLarge,
  ),
  unsupportedEncoding: errorCase(
    415,
    'unsupportedEncoding',
    'A charset other than UTF-8, or a compressed body',
    ERROR_DETAILS.unsupportedEncoding,
  ),
  invalidJson: {
    // The body `{"name": "ab", }`, answered by Node 24 (the image's): V8 words its messages
    // differently from one release to the next (Node 20 left out the line and column).
    ...validationCase('invalidJson', 'A body that is not JSON', {
      loc: ['body', 15],
      msg: 'JSON decode error',
      type: 'json_invalid',
      ctx: {
        error: 'Expected double-quoted property name in JSON at position 15 (line 1 column 16)',
      },
    }),
    description:
      'The answer to the body `{"name": "ab", }`. ' +
      "`loc` ends with where the body stops being JSON, in characters, as Python's json module " +
      "counts them (FastAPI's position). `ctx.error` is the JSON parser's own message, passed on " +
      'as it is: its wording varies with the Node.js runtime.',
  },
  rateLimited: errorCase(
    429,
    'rateLimited',
    "The key's budget is spent",
    ERROR_DETAILS.rateLimited,
  ),
  tooManyAuthFailures: errorCase(
    429,
    'tooManyAuthFailures',
    'Too many failed authentications from this address',
    ERROR_DETAILS.tooManyAuthFailures,
  ),
  internalError: errorCase(
    500,
    'internalError',
    'An unexpected error',
    ERROR_DETAILS.internalError,
  ),
  databaseUnavailable: errorCase(
    503,
    'databaseUnavailable',
    'Postgres does not answer, or no pooled connection frees up within ' +
      'DATABASE_CONNECT_TIMEOUT_MS (issued keys are looked up there too)',
    ERROR_DETAILS.databaseUnavailable,
    { retryAfter: DATABASE_RETRY_AFTER_SECONDS },
  ),
} as const;

/**
 * The cases answered before the key's budget is counted: by the body reader, the misplaced-key
 * check or authentication (app.setup.ts, ApiKeyGuard). They never carry the rate-limit headers.
 * (A known secret outside the headers is refused after: MisplacedSecretGuard.)
 */
export const BEFORE_THE_BUDGET: ReadonlySet<ErrorCase> = new Set([
  ERROR_CASES.misplacedKey,
  ERROR_CASES.malformedBody,
  ERROR_CASES.malformedRequest,
  ERROR_CASES.requestTimeout,
  ERROR_CASES.headersTooLarge,
  ERROR_CASES.missingKey,
  ERROR_CASES.keyInAuthorization,
  ERROR_CASES.invalidKey,
  ERROR_CASES.keyExpired,
  ERROR_CASES.invalidMetricsToken,
  ERROR_CASES.bodyTooLarge,
  ERROR_CASES.unsupportedEncoding,
  ERROR_CASES.invalidJson,
  ERROR_CASES.tooManyAuthFailures,
]);
