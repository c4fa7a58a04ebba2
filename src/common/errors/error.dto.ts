import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { REQUEST_ID_PATTERN } from '../logging/logging.module';
import { ERROR_DETAILS } from './error-details';

/** `request_id`, beside `detail` in every error body (see error-body.ts). */
export const REQUEST_ID_EXAMPLE = '3f0c9a52-6a8e-4a57-9d1b-2a4c1f0e7b11';
const REQUEST_ID_PROPERTY = {
  description:
    'Id of the request (the `X-Request-Id` response header); quote it when reporting a problem',
  maxLength: 128,
  pattern: REQUEST_ID_PATTERN.source,
  example: REQUEST_ID_EXAMPLE,
};

/** The body of every error but a 422 (error-body.ts sends it). */
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

/** The body of a 422, every failing field at once (pydantic's shape). */
@ApiSchema({ name: 'HTTPValidationError' })
export class HttpValidationErrorDto {
  @ApiProperty({ type: [ValidationErrorDto], description: 'Every failing field of the request' })
  detail: ValidationErrorDto[];

  @ApiProperty(REQUEST_ID_PROPERTY)
  request_id: string;
}
