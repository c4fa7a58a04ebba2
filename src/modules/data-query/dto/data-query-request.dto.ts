import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Max, Min } from 'class-validator';
import { IsInteger } from '../../../common/validation/is-integer';
import { FieldRule, FieldRules } from '../../../common/errors/field-rules';
import { IsIsoDate } from '../../../common/validation/is-iso-date';
import {
  exactInstant,
  ISO_DATE_FORMS,
  parseIsoEndDate,
  parseIsoStartDate,
} from '../../../common/validation/iso-date';
import { NotBlank } from '../../../common/validation/not-blank';
import { StorableText } from '../../../common/validation/storable-text';
import {
  MaxCharacters,
  MaxComposedCharacters,
  MinCharacters,
} from '../../../common/validation/text-length';
import { IsSource, Source } from '../../../common/source';
import { KEYWORD_MODES, KeywordMode } from '../../../network/protocol';
import { AUTHOR_NAME_PATTERN, NamesAnAuthor } from './author-name';

/**
 * The instants a query spans. Without `end_date`, it ends now, on the service's clock, as the
 * stored data's hours; a date-only `end_date` is the end of its day (parseIsoEndDate): the live
 * matcher, the stored hours and what miners are sent all read these.
 */
export function queryRange(
  request: { start_date?: string | null; end_date?: string | null },
  now: Date,
): { startDate: Date | null; endDate: Date } {
  return {
    startDate: request.start_date ? parseIsoStartDate(request.start_date)! : null,
    endDate: request.end_date ? parseIsoEndDate(request.end_date)! : now,
  };
}

/**
 * A range that ends before it starts is refused at start_date, with the request's other errors
 * (field-rules.ts), and so is one that starts after now, with end_date or without (then the range
 * ends now): no item is from the future, and a range there was asked of miners, whose calls it
 * spent on empty answers. The start is held to the earlier of end_date and now, and a refusal
 * names that one (end_date on a tie), so that one change of start_date meets both. Compared to
 * the nanosecond the dates are written to (exactInstant), not as their Dates, which cut a
 * fraction to the millisecond: `…10:00:00.0000001Z` is after `…10:00:00Z`.
 */
const START_NOT_AFTER_END: FieldRule<DataQueryRequestDto> = {
  field: 'start_date',
  reads: ['end_date'],
  refuse: ({ start_date, end_date }, now) => {
    if (!start_date) return undefined;
    const start = exactInstant(start_date)!;
    const present = exactInstant(now)!;
    const end = end_date ? exactInstant(end_date, parseIsoEndDate)! : undefined;
    if (end !== undefined && end <= present)
      return start > end ? { msg: 'start_date must not be after end_date' } : undefined;
    if (start <= present) return undefined;
    return {
      msg: end_date
        ? 'start_date must not be after now'
        : 'start_date must not be after now (the end of a query without end_date)',
    };
  },
};

@FieldRules(START_NOT_AFTER_END)
@ApiSchema({
  name: 'DataQueryRequest',
  description:
    'An item matches when it is from `source`, inside [`start_date`, `end_date`], authored by any of `usernames` ' +
    '(case-insensitive, leading `@` optional) and satisfies the keywords (case-insensitive): every one of them, or ' +
    'at least one with `keyword_mode: "any"`. The conditions combine by AND: with usernames and keywords, an item ' +
    'must be by one of the usernames and satisfy the keywords. For X a `#tag` keyword matches the whole tag, in the ' +
    'text or the hashtag list (`#eth` not in `#ethereum`); for Reddit a keyword written `r/<name>`, `/r/<name>` or `/<name>` selects the subreddit. Items come ' +
    'newest first, one per post (an X post by its id, a Reddit item by its id, under its canonical `uri`), at most `limit`. ' +
    'Every field but `source` may be `null`, which is the same as leaving it out.',
})
export class DataQueryRequestDto {
  @IsSource()
  source: Source;

  @ApiPropertyOptional({
    description:
      'Authors to include (any of them): each an X handle (letters, digits, `_`) or a Reddit username (`-` ' +
      'too), 1 to 50 characters, after an optional `@`, white space around it trimmed. Anything else (`"@"`, ' +
      '`" "`, `"@@elon"`, `"@ elon"`, `"u/spez"`, an X handle with `-`): 422 `value_error`',
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 140, pattern: AUTHOR_NAME_PATTERN },
    maxItems: 10,
    nullable: true,
    example: ['elonmusk'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @IsString({ each: true })
  @MinCharacters(1, { each: true })
  @MaxCharacters(140, { each: true })
  @NamesAnAuthor({ each: true })
  @StorableText({ each: true })
  usernames?: string[] | null;

  @ApiPropertyOptional({
    description:
      'Keywords: all must hold, or at least one with `keyword_mode: "any"`. Trimmed; empty or only white ' +
      'space: 422 `string_too_short`',
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 140, pattern: '\\S' },
    maxItems: 5,
    nullable: true,
    example: ['#bitcoin'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(5)
  @IsString({ each: true })
  @MinCharacters(1, { each: true })
  @NotBlank({ each: true })
  @MaxComposedCharacters(140, { each: true })
  @StorableText({ each: true })
  keywords?: string[] | null;

  @ApiPropertyOptional({
    description:
      'How `keywords` combine, as in the hosted API: `all` (when absent) = an item satisfies every keyword, ' +
      '`any` = at least one. Either way `usernames` and the dates still apply (AND): an item must be by one of ' +
      'the usernames and satisfy the keywords by this mode.',
    // No `default` in the document: generators such as openapi-typescript make a field with one
    // required in the request type, and clients should not have to send it.
    enum: KEYWORD_MODES,
    nullable: true,
    example: 'all',
  })
  @IsOptional()
  @IsIn(KEYWORD_MODES)
  keyword_mode?: KeywordMode | null;

  @ApiPropertyOptional({
    description:
      `The inclusive start of the range: ${ISO_DATE_FORMS}; a date alone is its 00:00. ` +
      'No value = no lower bound within the 30-day retention.',
    type: String,
    nullable: true,
    example: '2026-11-20T00:00:00Z',
  })
  @IsOptional()
  @IsString()
  @IsIsoDate()
  start_date?: string | null;

  @ApiPropertyOptional({
    description:
      `The inclusive end of the range: ${ISO_DATE_FORMS}. A date alone is the end of ` +
      'that day (its last millisecond, 23:59:59.999), so a start and end of the same date ask for that whole day. ' +
      'No value = now.',
    type: String,
    nullable: true,
    example: null,
  })
  @IsOptional()
  @IsString()
  @IsIsoDate()
  end_date?: string | null;

  @ApiPropertyOptional({
    description: 'Maximum number of items returned',
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: 1000,
    default: 100,
    nullable: true,
    example: 100,
  })
  @IsOptional()
  @IsInteger()
  @Min(1)
  @Max(1000)
  limit?: number | null;
}
