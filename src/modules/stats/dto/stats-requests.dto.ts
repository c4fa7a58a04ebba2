import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { IsSource, Source } from '../../../common/source';
import { IsInteger } from '../../../common/validation/is-integer';
import { NoNulCharacter } from '../../../common/validation/no-nul';

/** `source`, as a path parameter (`@Param()`) or a query parameter (`@Query()`). */
export class SourceDto {
  @IsSource()
  source: Source;
}

export class LabelQueryDto {
  @ApiProperty({
    description: 'Label; trimmed and lower-cased before lookup',
    example: '#bitcoin',
    maxLength: 140,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(140)
  @NoNulCharacter()
  label: string;
}

/** Bucket ids are Postgres integers: a larger one was a 500 at the query (found by fuzzing). */
const MAX_BUCKET = 2147483647;

export class QueryBucketQueryDto {
  @ApiPropertyOptional({
    description: 'Only buckets of this label',
    maxLength: 140,
    example: '#bitcoin',
  })
  @IsOptional()
  @IsString()
  @MaxLength(140)
  @NoNulCharacter()
  label?: string;

  @ApiPropertyOptional({
    description: 'First time bucket id (hours since the epoch); default end_bucket − 24',
    example: 494276,
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: MAX_BUCKET,
  })
  @IsOptional()
  @IsInteger()
  @Min(0)
  @Max(MAX_BUCKET)
  start_bucket?: number;

  @ApiPropertyOptional({
    description: 'Last time bucket id; default the current bucket − 1',
    example: 494300,
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: MAX_BUCKET,
  })
  @IsOptional()
  @IsInteger()
  @Min(0)
  @Max(MAX_BUCKET)
  end_bucket?: number;
}
