import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import type { ResponseObject } from '@nestjs/swagger';
import { REQUEST_ID_PATTERN } from '../logging/logging.module';
import { MISPLACED_SECRET_DETAIL } from '../security/refuse-misplaced-secrets';
import { ERROR_DETAILS } from './error-details';
import { ValidationErrorItem } from './validation-error-item';

/** `request_id`, beside `detail` in every error body (see error-body.ts). */
const REQUEST_ID_EXAMPLE = '3f0c9a52-6a8e-4a57-9d1b-2a4c1f0e7b11';
const REQUEST_ID_PROPERTY = {
  description:
    'Id of the request (the `X-Request-Id` response header); quote it when reporting a problem',
  maxLength: 128,
  pattern: REQUEST_ID_PATTERN.source,
  example: REQUEST_ID_EXAMPLE,
};

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  @ApiProperty({ description: 'What went wrong', example: ERROR_DETAILS.invalidKey })
  detail: string;

  @ApiProperty(REQUEST_ID_PROPERTY)
  request_id: string;
}

@ApiSchema({ name: 'ValidationError' })
export class ValidationErrorDto {
  @ApiProperty({
    description:
      'Where the failing value is: `body`, `query`, `path` or `header`, then field names and list indexes',
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'integer', format: 'int32', minimum: 0 }] },
    example: ['body', 'limit'],
  })
  loc: (string | number)[];

  @ApiProperty({ example: 'Input should be less than or equal to 1000' })
  msg: string;

  @ApiProperty({ description: 'pydantic v2 error type', example: 'less_than_equal' })
  type: string;

  @ApiPropertyOptional({
    description: 'The rule that failed, when it has parameters (`{"le": 1000}`)',
    type: 'object',
    additionalProperties: true,
    example: { le: 1000 },
  })
  ctx?: Record<string, unknown>;
}

@ApiSchema({ name: 'HTTPValidationError' })
export class HttpValidationErrorDto {
  @ApiProperty({ type: [ValidationErrorDto], description: 'Every failing field of the request' })
  detail: ValidationErrorDto[];

  @ApiProperty(REQUEST_ID_PROPERTY)
  request_id: string;
}

/** One error an operation answers: its status and the `detail` of the body, as an example. */
export interface ErrorCase {
  status: number;
  /** The example's key in the document. */
  name: string;
  summary: string;
  detail: string | ValidationErrorItem[];
}

/** An error of `status` sending `detail`, documented as the example `name`. */
export function errorCase(
  status: number,
  name: string,
  summary: string,
  detail: string,
): ErrorCase {
  return { status, name, summary, detail };
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
  misplacedSecret: errorCase(
    400,
    'misplacedSecret',
    'A secret outside the X-API-Key and Authorization headers',
    MISPLACED_SECRET_DETAIL,
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
    'A request line or header Node’s HTTP parser cannot read',
    ERROR_DETAILS.malformedRequest,
  ),
  headersTimeout: errorCase(
    408,
    'headersTimeout',
    'Headers not all sent within HTTP_HEADERS_TIMEOUT_MS',
    ERROR_DETAILS.headersTimeout,
  ),
  requestTimeout: errorCase(
    408,
    'requestTimeout',
    'The request (its body included) not all sent within HTTP_REQUEST_TIMEOUT_MS',
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
    'No X-API-Key header, but an Authorization header (`Bearer <key>`)',
    ERROR_DETAILS.keyInAuthorization,
  ),
  invalidKey: errorCase(401, 'invalidKey', 'Unknown or deactivated key', ERROR_DETAILS.invalidKey),
  keyExpired: errorCase(401, 'keyExpired', 'A key past its `expires_at`', ERROR_DETAILS.keyExpired),
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
  invalidJson: validationCase('invalidJson', 'A body that is not JSON', {
    loc: ['body', 15],
    msg: 'JSON decode error',
    type: 'json_invalid',
    ctx: { error: 'Expected double-quoted property name in JSON at position 15' },
  }),
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
    'Postgres does not answer (issued keys are looked up there too)',
    ERROR_DETAILS.databaseUnavailable,
  ),
} as const;

/**
 * The cases answered before the key's budget is counted: by the body reader, the misplaced-secret
 * check or authentication (app.setup.ts, ApiKeyGuard). They never carry the rate-limit headers.
 */
const BEFORE_THE_BUDGET: ReadonlySet<ErrorCase> = new Set([
  ERROR_CASES.misplacedSecret,
  ERROR_CASES.malformedBody,
  ERROR_CASES.malformedRequest,
  ERROR_CASES.headersTimeout,
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

/**
 * Marks a response whose every case is answered before the key's budget is counted: the
 * document's finishing step (common/openapi) leaves the rate-limit headers off it, then drops
 * the mark.
 */
export const BEFORE_THE_BUDGET_EXTENSION = 'x-before-the-budget';

/** What a bare status stands for in ApiErrorResponses; other statuses need their cases. */
const STANDARD_CASES: Partial<Record<number, ErrorCase[]>> = {
  400: [ERROR_CASES.misplacedSecret, ERROR_CASES.malformedBody, ERROR_CASES.malformedRequest],
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
      { summary: error.summary, value: { detail: error.detail, request_id: REQUEST_ID_EXAMPLE } },
    ]),
  );
  // An operation charged to no budget (key administration, /metrics) has only the lockout's 429.
  const onlyTheLockout = status === 429 && !cases.includes(ERROR_CASES.rateLimited);
  return {
    description: onlyTheLockout ? LOCKOUT_DESCRIPTION : (DESCRIPTIONS[status] ?? 'Error'),
    content: { 'application/json': { schema: { $ref: getSchemaPath(schema) }, examples } },
    ...(cases.every((error) => BEFORE_THE_BUDGET.has(error))
      ? { [BEFORE_THE_BUDGET_EXTENSION]: true }
      : {}),
  };
}

/**
 * The responses every operation has, added where an operation does not document its own: Node's
 * HTTP server answers 408 and 431 (common/http/client-errors.ts) before any route is known.
 */
export const STANDARD_RESPONSES: Readonly<Record<number, ResponseObject>> = {
  408: errorResponse(408, [ERROR_CASES.headersTimeout, ERROR_CASES.requestTimeout]),
  431: errorResponse(431, [ERROR_CASES.headersTooLarge]),
  500: errorResponse(500, [ERROR_CASES.internalError]),
  503: errorResponse(503, [ERROR_CASES.databaseUnavailable]),
};
