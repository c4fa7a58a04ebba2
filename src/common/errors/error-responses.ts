import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { HeaderObject, ResponseObject } from '@nestjs/swagger';
import { BEFORE_THE_BUDGET, ERROR_CASES, ErrorCase } from './error-cases';
import { ErrorDetailDto, HttpValidationErrorDto, REQUEST_ID_EXAMPLE } from './error.dto';

/**
 * Marks a response whose every case is answered before the key's budget is counted: the
 * document's finishing step (common/openapi) leaves the rate-limit headers off it, then drops
 * the mark.
 */
export const BEFORE_THE_BUDGET_EXTENSION = 'x-before-the-budget';

/** What a bare status stands for in ApiErrorResponses; other statuses need their cases. */
const STANDARD_CASES: Partial<Record<number, ErrorCase[]>> = {
  400: [
    ERROR_CASES.misplacedKey,
    ERROR_CASES.misplacedSecret,
    ERROR_CASES.malformedBody,
    ERROR_CASES.malformedRequest,
  ],
  401: [
    ERROR_CASES.missingKey,
    ERROR_CASES.keyInAuthorization,
    ERROR_CASES.invalidKey,
    ERROR_CASES.keyExpired,
  ],
  413: [ERROR_CASES.bodyTooLarge],
  415: [ERROR_CASES.unsupportedEncoding],
  429: [ERROR_CASES.rateLimited, ERROR_CASES.tooManyAuthFailures],
  500: [ERROR_CASES.internalError],
  503: [ERROR_CASES.databaseUnavailable],
};

/** The errors every operation with a JSON body can answer before its own checks. */
export const JSON_BODY_ERRORS = [413, 415, ERROR_CASES.invalidJson] as const;

const DESCRIPTIONS: Record<number, string> = {
  400:
    'A secret (an API key or token) sent outside the X-API-Key and Authorization headers: the request ' +
    'was not processed; or a request (its line, headers or body) the server could not read',
  401:
    'No key (`Missing API key`, or `Missing API key: send it in the X-API-Key header, not ' +
    'Authorization` when an Authorization header came instead, but on `/metrics`, which takes a ' +
    'bearer token), an unknown or deactivated one (`Invalid API key`), or one past its expiry ' +
    '(`API key expired`)',
  403: 'The key is valid but lacks the privilege this operation needs',
  404: 'Not found',
  408:
    'The client did not send its headers within HTTP_HEADERS_TIMEOUT_MS, or its whole request within ' +
    'HTTP_REQUEST_TIMEOUT_MS; the connection is closed',
  409: 'Conflict with the current state of the resource',
  410: 'Gone: what was asked for does not exist and will not, short of an operator acting (the detail says why)',
  412: 'A precondition of the request (`If-Match`, `If-Unmodified-Since`) does not hold',
  413: 'Request body too large (over BODY_LIMIT)',
  415: 'Unsupported body encoding (a charset other than UTF-8, or a compressed body)',
  422: 'Validation error: every failing field at once',
  431: 'The request line and headers are over 16 KB (Node’s limit); the connection is closed',
  429:
    'Rate limit exceeded (`Retry-After` says when to come back), or too many failed authentications ' +
    'from this address',
  500: 'Unexpected error; the full error is logged under `request_id`',
  503: 'A dependency is unavailable (the database); retry shortly',
};

const LOCKOUT_DESCRIPTION =
  'Too many failed authentications from this address (`Retry-After` says when to come back). ' +
  "This operation is not charged to the key's budget: it is never answered `Rate limit exceeded`";

/**
 * Documents the `{"detail": ..., "request_id": ...}` error responses an operation can give, one
 * example per case. A bare status stands for its standard cases (STANDARD_CASES); the cases of
 * one status are documented together. Every 503 also has the database's example, since every
 * operation looks its key up there. Headers are added to every response by the document's
 * finishing step (common/openapi).
 */
export function ApiErrorResponses(
  ...errors: readonly (number | ErrorCase)[]
): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCase[]>();
  for (const error of errors) {
    const status = typeof error === 'number' ? error : error.status;
    const cases = typeof error === 'number' ? STANDARD_CASES[error] : [error];
    if (!cases) throw new Error(`ApiErrorResponses: give the cases of status ${status}`);
    byStatus.set(status, [...(byStatus.get(status) ?? []), ...cases]);
  }
  const database = byStatus.get(503);
  if (database && !database.includes(ERROR_CASES.databaseUnavailable))
    database.push(ERROR_CASES.databaseUnavailable);
  return applyDecorators(
    ApiExtraModels(ErrorDetailDto, HttpValidationErrorDto),
    ...[...byStatus].map(([status, cases]) =>
      ApiResponse({ status, ...errorResponse(status, cases) }),
    ),
  );
}

/** The response object of `status` with one example per case. */
export function errorResponse(status: number, cases: readonly ErrorCase[]): ResponseObject {
  const schema = status === 422 ? HttpValidationErrorDto : ErrorDetailDto;
  const examples = Object.fromEntries(
    cases.map((error) => [
      error.name,
      {
        summary: error.summary,
        ...(error.description ? { description: error.description } : {}),
        value: { detail: error.detail, request_id: REQUEST_ID_EXAMPLE },
      },
    ]),
  );
  // An operation charged to no budget (key administration, /metrics) has only the lockout's 429.
  const onlyTheLockout = status === 429 && !cases.includes(ERROR_CASES.rateLimited);
  // Every 429 gets the shared Retry-After (the document's finishing step, as in
  // common/openapi/response-headers.ts); here, the cases of another status that send it.
  const headers: Record<string, HeaderObject> = {};
  for (const error of cases) Object.assign(headers, error.headers);
  Object.assign(headers, retryAfterHeader(cases));
  const description = onlyTheLockout ? LOCKOUT_DESCRIPTION : DESCRIPTIONS[status];
  // Not a generic "Error": it told the reader nothing, and every check on descriptions passed it.
  if (description === undefined)
    throw new Error(`errorResponse: no description for status ${status}; add one to DESCRIPTIONS`);
  return {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: getSchemaPath(schema) }, examples } },
    ...(cases.every((error) => BEFORE_THE_BUDGET.has(error))
      ? { [BEFORE_THE_BUDGET_EXTENSION]: true }
      : {}),
  };
}

/**
 * Retry-After, documented on a status other than 429 whose `cases` send it (none: nothing). Each
 * such case sends a fixed number of seconds, so the schema is bounded by them: the value a
 * client reads is one of those (unlike a 429's, the time left in a window).
 */
function retryAfterHeader(cases: readonly ErrorCase[]): Record<string, HeaderObject> {
  const sending = cases.filter((error) => error.retryAfter !== undefined);
  if (sending.length === 0) return {};
  const seconds = sending.map((error) => error.retryAfter!);
  return {
    'Retry-After': {
      description:
        'Seconds to wait before trying again; sent with ' +
        `${sending.map((error) => `\`${error.name}\``).join(', ')} only`,
      schema: {
        type: 'integer',
        format: 'int64',
        minimum: Math.min(...seconds),
        maximum: Math.max(...seconds),
        example: seconds[0],
      },
    },
  };
}

/**
 * The responses every operation has, added where an operation does not document its own: Node's
 * HTTP server answers 408 and 431 (common/http/client-errors.ts) before any route is known.
 */
export const STANDARD_RESPONSES: Readonly<Record<number, ResponseObject>> = {
  408: errorResponse(408, [ERROR_CASES.requestTimeout]),
  431: errorResponse(431, [ERROR_CASES.headersTooLarge]),
  500: errorResponse(500, [ERROR_CASES.internalError]),
  503: errorResponse(503, [ERROR_CASES.databaseUnavailable]),
};
