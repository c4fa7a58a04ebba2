import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Max, Min } from 'class-validator';
import { IsSource, Source } from '../../../common/source';
import { FieldRule, FieldRules } from '../../../common/errors/field-rules';
import { timeBucketId } from '../../../network/protocol';
import { IsInteger } from '../../../common/validation/is-integer';
import { StorableText } from '../../../common/validation/storable-text';
import { NotBlank } from '../../../common/validation/not-blank';
import { MaxComposedCharacters } from '../../../common/validation/text-length';

/** `source`, as a path parameter (`@Param()`) or a query parameter (`@Query()`). */
export class SourceDto {
  @IsSource()
  source: Source;
}

export class LabelQueryDto {
  @ApiProperty({
    description:
      'Label; read as an on-demand keyword: `/r/name` and `/name` are `r/name`, `$tag` is `#tag`; anything else ' +
      'trimmed and lower-cased before lookup. Empty or only white space: 422 `string_too_short`',
    example: '#bitcoin',
    minLength: 1,
    maxLength: 140,
    pattern: '\\S',
  })
  @IsString()
  @NotBlank()
  @MaxComposedCharacters(140)
  @StorableText()
  label: string;
}

/** Bucket ids are Postgres integers: a larger one was a 500 at the query (found by fuzzing). */
const MAX_BUCKET = 2147483647;

/**
 * The range a query_bucket asks for, its defaults filled in: `end_bucket` the last complete hour
 * at `now`, `start_bucket` 24 hours before the end (bucket ids start at 0, as start_bucket's own
 * minimum says).
 */
export function bucketRange(
  query: { start_bucket?: number; end_bucket?: number },
  now: Date,
): { start: number; end: number } {
  const end = query.end_bucket ?? timeBucketId(now) - 1;
  return { start: query.start_bucket ?? Math.max(0, end - 24), end };
}

/**
 * A range that ends before it starts is refused at start_bucket, with the query's other errors
 * (field-rules.ts). Without end_bucket the range ends at the last complete hour, so it is
 * checked against the clock: a start_bucket in the future, or the current hour. The message
 * then names that end, which the client did not send.
 */
const START_NOT_AFTER_END: FieldRule<QueryBucketQueryDto> = {
  field: 'start_bucket',
  reads: ['end_bucket'],
  refuse: (query, now) => {
    const { start, end } = bucketRange(query, now);
    if (start <= end) return undefined;
    return {
      msg:
        query.end_bucket === undefined
          ? `start_bucket must not be after end_bucket (by default the last complete hour, ${end})`
          : 'start_bucket must not be after end_bucket',
    };
  },
};

@FieldRules(START_NOT_AFTER_END)
export class QueryBucketQueryDto {
  // No example: try-it-out would send it with either source, and an X label (`#bitcoin`) has no
  // Reddit bucket; without one the newest bucket of any label is fetched, for both sources.
  @ApiPropertyOptional({
    description:
      'Only buckets of this label, e.g. `#bitcoin` (X) or `r/bitcoin` (Reddit); read as an on-demand keyword ' +
      'of the source (X: `$tag` is `#tag`; Reddit: `/r/name` and `/name` are `r/name`), else trimmed and ' +
      'lower-cased. Default: the newest bucket of any label. Empty or only white space: 422 ' +
      '`string_too_short`',
    minLength: 1,
    maxLength: 140,
    pattern: '\\S',
  })
  @IsOptional()
  @IsString()
  @NotBlank()
  @MaxComposedCharacters(140)
  @StorableText()
  label?: string;

  // No example: a fixed bucket id falls out of the data's range within days, and try-it-out
  // would send it; without one the default range (the last 25 complete hours) is queried.
  @ApiPropertyOptional({
    description:
      'First time bucket id, inclusive. A bucket id is an hour counted from the Unix epoch (UTC): ' +
      'floor(unix seconds / 3600), e.g. `Math.floor(Date.now() / 3_600_000)` for the current hour. ' +
      'Default: end_bucket − 24, or 0 when that is negative',
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
    description:
      'Last time bucket id, inclusive (see start_bucket). Default: the current bucket − 1, the ' +
      'last complete hour',
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
