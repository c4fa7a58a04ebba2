import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString } from 'class-validator';

export const SOURCES = ['x', 'reddit'] as const;
export type Source = (typeof SOURCES)[number];

/**
 * A data source, accepted in any case (`x`, `X`, `Reddit`) and without the white space around it
 * (` x `), normalized to lower case.
 */
export function IsSource(
  description = 'Data source: `x` or `reddit`, in any case, surrounding white space ignored',
): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ description, enum: SOURCES, example: 'x' }),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' ? value.trim().toLowerCase() : value,
    ),
    IsString(),
    IsIn(SOURCES),
  );
}
