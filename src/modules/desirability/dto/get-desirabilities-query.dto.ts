import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Max, Min } from 'class-validator';
import { IsInteger } from '../../../common/validation/is-integer';
import { PageLimit } from '../../../common/validation/page-limit';
import { StorableText } from '../../../common/validation/storable-text';
import { MaxCharacters, MinCharacters } from '../../../common/validation/text-length';
import { HotkeyAddress } from './hotkey-address';

/** The shapes of the aggregate list `format` names. */
export const DESIRABILITY_FORMATS = ['jobs', 'legacy'] as const;

export class GetDesirabilitiesQueryDto {
  @ApiPropertyOptional({
    description:
      'A validator hotkey: return its current submission as submitted (its jobs, ids and weights, unscaled), ' +
      'instead of the aggregate. ' +
      'Its SS58 address under any prefix, read as its address under prefix 42 (the chain’s, which names its file ' +
      'in Gravity); text that is no address (a broken checksum, blanks) is a 422 `value_error`',
    minLength: 1,
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @MinCharacters(1)
  @MaxCharacters(64)
  @StorableText()
  @HotkeyAddress()
  hotkey?: string;

  @ApiPropertyOptional({
    description:
      'Shape of the aggregate list: jobs `[{id, weight, params}]`, or legacy `[{source_name, label_weights}]` ' +
      '(jobs without a label are left out). Not used with `hotkey` (still validated).',
    enum: DESIRABILITY_FORMATS,
    default: 'jobs',
  })
  @IsOptional()
  @IsIn(DESIRABILITY_FORMATS)
  format?: (typeof DESIRABILITY_FORMATS)[number];

  @PageLimit(1000, {
    description:
      'Jobs per page of the aggregate (heaviest first, ties by id: stable across pages); with `format=legacy`, ' +
      'labels (heaviest first, ties by platform then label), so that no label is split across pages. The total is in the ' +
      '`X-Total-Count` response header. Not used with `hotkey` (still validated).',
    paged: true,
  })
  limit?: number;

  @ApiPropertyOptional({
    description:
      'Jobs (labels with `format=legacy`) of the aggregate to skip. Not used with `hotkey` ' +
      '(still validated).',
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: 1_000_000,
    default: 0,
  })
  @IsOptional()
  @IsInteger()
  @Min(0)
  @Max(1_000_000)
  offset?: number;
}
