import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Max, Min } from 'class-validator';
import { IsInteger } from './is-integer';

/** A list's page size when the request names none (tasks, desirabilities). */
export const DEFAULT_PAGE_LIMIT = 100;

/**
 * The `limit` query parameter of a paged list: optional, a whole number from 1 to `max`.
 * `paged` lists answer DEFAULT_PAGE_LIMIT rows without it (and the document says so); the others
 * answer every row after `offset`, as the keys list does for the interface.
 */
export function PageLimit(
  max: number,
  { description, paged }: { description?: string; paged: boolean },
): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      description,
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: max,
      ...(paged ? { default: DEFAULT_PAGE_LIMIT } : {}),
    }),
    IsOptional(),
    IsInteger(),
    Min(1),
    Max(max),
  );
}
