import { applyDecorators } from '@nestjs/common';
import {
  ApiProperty,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
  ApiExtraModels,
} from '@nestjs/swagger';

/** `request_id`, beside `detail` in every error body (see error-body.ts). */
const REQUEST_ID_PROPERTY = {
  description:
    'Id of the request (the `X-Request-Id` response header); quote it when reporting a problem',
  example: '3f0c9a52-6a8e-4a57-9d1b-2a4c1f0e7b11',
};

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  @ApiProperty({ description: 'What went wrong', example: 'Invalid API key' })
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
    items: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    example: ['body', 'limit'],
  })
  loc: (string | number)[];

  @ApiProperty({ example: 'Input should be less than or equal to 1000' })
  msg: string;

  @ApiProperty({ description: 'pydantic v2 error type', example: 'less_than_equal' })
  type: string;
}

@ApiSchema({ name: 'HTTPValidationError' })
export class HttpValidationErrorDto {
  @ApiProperty({ type: [ValidationErrorDto], description: 'Every failing field of the request' })
  detail: ValidationErrorDto[];

  @ApiProperty(REQUEST_ID_PROPERTY)
  request_id: string;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400:
    'A secret (an API key or token) sent outside the X-API-Key and Authorization headers: the request ' +
    'was not processed; or an HTTP request the server could not parse',
  401:
    'Missing API key (`Missing API key`), unknown or deactivated key (`Invalid API key`), or a key ' +
    'past its expiry (`API key expired`)',
  403: 'The key is valid but lacks the privilege this operation needs',
  404: 'Not found',
  409: 'Conflict with the current state of the resource',
  413: 'Request body too large',
  415: 'Unsupported body encoding (a charset other than UTF-8, or a compressed body)',
  429: 'Rate limit exceeded (see `Retry-After`), or too many failed authentications from this address',
  500: 'Unexpected error; the full error is logged under `request_id`',
  503: 'A dependency is unavailable (e.g. the database); retry shortly',
};

/**
 * Documents the `{"detail": ..., "request_id": ...}` error responses an operation can give.
 * Always JSON, named as `content` so that an operation's `@ApiProduces` (gzip for a dataset,
 * Prometheus text for /metrics) describes its success only, not its errors.
 */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  const json = (schema: { $ref: string }) => ({ 'application/json': { schema } });
  return applyDecorators(
    ApiExtraModels(ErrorDetailDto, HttpValidationErrorDto),
    ...statuses.map((status) =>
      status === 422
        ? ApiResponse({
            status,
            description: 'Validation error',
            content: json({ $ref: getSchemaPath(HttpValidationErrorDto) }),
          })
        : ApiResponse({
            status,
            description: ERROR_DESCRIPTIONS[status] ?? 'Error',
            content: json({ $ref: getSchemaPath(ErrorDetailDto) }),
          }),
    ),
  );
}
