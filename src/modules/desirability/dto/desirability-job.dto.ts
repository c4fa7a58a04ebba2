import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { MAX_DESIRABILITY_JOBS } from '../../../config/environment-variables';
import { ISO_DATE_FORMS } from '../../../common/validation/iso-date';

/**
 * `x` or `reddit` in any case, white space around it ignored (parseSource trims it, as every
 * source field does), as a pattern: an enum would promise lower case, while a submission is
 * answered back exactly as sent (`X`, ` Reddit`). The document refused what the service took
 * (a fuzzing audit's finding). ECMAScript's `\s` is the white space `trim` removes.
 */
export const PLATFORM_PATTERN = '^\\s*([xX]|[rR][eE][dD][dD][iI][tT])\\s*$';

@ApiSchema({
  name: 'DesirabilityJobParams',
  description: 'What to scrape. A job needs a label or a keyword (or both).',
})
export class DesirabilityJobParamsDto {
  @ApiProperty({
    description: '`x` or `reddit`, in any case, surrounding white space ignored',
    pattern: PLATFORM_PATTERN,
    example: 'x',
  })
  platform: string;

  @ApiPropertyOptional({
    description:
      'X: a hashtag (`#tag`; `＃tag`, the full-width sign, is stored as `#tag`); Reddit: a subreddit (`r/name`; `/r/name` and `/name` are accepted and ' +
      'stored as `r/name`). Trimmed, composed (NFC) and lower-cased, 1..140 characters, no control ' +
      'characters.',
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: 140,
    example: '#tao',
  })
  label?: string | null;

  @ApiPropertyOptional({
    description:
      'Text the posts must contain (case-insensitive), trimmed and composed (NFC), 1..140 characters, no ' +
      'control characters',
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: 140,
    example: null,
  })
  keyword?: string | null;

  @ApiPropertyOptional({
    description: `Only posts from this time on: ${ISO_DATE_FORMS}`,
    type: String,
    nullable: true,
    example: null,
  })
  post_start_datetime?: string | null;

  @ApiPropertyOptional({
    description: 'Only posts before this time; must be after `post_start_datetime`',
    type: String,
    nullable: true,
    example: null,
  })
  post_end_datetime?: string | null;
}

@ApiSchema({ name: 'DesirabilityJob', description: 'A scraping job (the jobs format)' })
export class DesirabilityJobDto {
  @ApiProperty({
    description:
      'Task id: 1..80 printable characters (no control or format characters: CR, LF, TAB, bidi controls, zero-width characters, …), no `/` or `\\`, not `.` or `..` (URLs resolve them), unique within a submission. ' +
      'Its params (normalized) are unique within the submission too: jobs with the same params are one task. ' +
      'Re-submitting an active task id with the same params keeps its registration.',
    maxLength: 80,
    example: 'tao-x',
  })
  id: string;

  @ApiProperty({
    description:
      'Relative weight, > 0. The weights of a submission are normalized to sum to 1; in the ' +
      'aggregate, the job’s share of the whole list.',
    type: 'number',
    format: 'double',
    exclusiveMinimum: true,
    minimum: 0,
    example: 1,
  })
  weight: number;

  @ApiProperty({ type: DesirabilityJobParamsDto })
  params: DesirabilityJobParamsDto;
}

@ApiSchema({
  name: 'LegacyDesirability',
  description: 'The legacy format: labels of one platform with their weights',
})
export class LegacyDesirabilityDto {
  @ApiProperty({
    description: '`x` or `reddit`, in any case, surrounding white space ignored',
    pattern: PLATFORM_PATTERN,
    example: 'reddit',
  })
  source_name: string;

  @ApiProperty({
    description:
      'Label → weight (> 0). Labels follow the jobs format’s rules. Each label becomes a job ' +
      'whose id is generated from platform and label: the same label gets the same id while its ' +
      'task runs, and once that task has ended the next generation’s id (`…-g2-…`), a new task.',
    type: 'object',
    additionalProperties: { type: 'number', format: 'double', exclusiveMinimum: true, minimum: 0 },
    maxProperties: MAX_DESIRABILITY_JOBS,
    example: { 'r/bitcoin': 0.6, 'r/ethereum': 0.4 },
  })
  label_weights: Record<string, number>;
}
