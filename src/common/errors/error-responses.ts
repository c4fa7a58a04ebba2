import { applyDecorators } from '@nestjs/common';
import {
  ApiProperty,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
  ApiExtraModels,
} from '@nestjs/swagger';

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  @ApiProperty({ description: 'What went wrong', example: 'Invalid API key' })
  detail: string;
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
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  401: 'Missing API key (`Missing API key`) or unknown/deactivated key (`Invalid API key`)',
  403: 'The key is valid but lacks the privilege this operation needs',
  404: 'Not found',
  409: 'Conflict with the current state of the resource',
  413: 'Request body too large',
  415: 'Unsupported body encoding (a charset other than UTF-8, or a compressed body)',
  429: 'Rate limit exceeded (see `Retry-After`), or too many failed authentications from this address',
  503: 'A dependency is unavailable',
};

/** Documents the `{"detail": ...}` error responses an operation can give. */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorDetailDto, HttpValidationErrorDto),
    ...statuses.map((status) =>
      status === 422
        ? ApiResponse({
            status,
            description: 'Validation error',
            schema: { $ref: getSchemaPath(HttpValidationErrorDto) },
          })
        : ApiResponse({
            status,
            description: ERROR_DESCRIPTIONS[status] ?? 'Error',
            schema: { $ref: getSchemaPath(ErrorDetailDto) },
          }),
    ),
  );
}
