import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Max, Min } from 'class-validator';
import { IsInteger } from './is-integer';

/** Postgres' OFFSET is a bigint; the document types the parameter int32. */
const MAX_OFFSET = 2_147_483_647;

/**
 * The `offset` query parameter of a list read from Postgres: optional, 0 by default, a whole
 * number within int32, so that OFFSET never sees 1e300 (a 500, found by fuzzing).
 */
export function PageOffset(description?: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      description,
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: MAX_OFFSET,
      default: 0,
    }),
    IsOptional(),
    IsInteger(),
    Min(0),
    Max(MAX_OFFSET),
  );
}
