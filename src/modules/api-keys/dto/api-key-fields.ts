import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Max, Min } from 'class-validator';
import { IsInteger } from '../../../common/validation/is-integer';
import { FieldRule } from '../../../common/errors/field-rules';
import { IsRfc3339DateTime } from '../../../common/validation/is-iso-date';
import { parseRfc3339DateTime } from '../../../common/validation/iso-date';
import { PrintableName } from '../../../common/validation/control-characters';
import { StorableText } from '../../../common/validation/storable-text';
import { MaxCharacters, MinCharacters } from '../../../common/validation/text-length';
import {
  NOT_ONLY_WHITE_SPACE_PATTERN,
  trimWhiteSpace,
} from '../../../common/validation/white-space';

import { RATE_LIMIT_MAX, RATE_LIMIT_MIN } from '../../../common/throttling/rate-limit-settings';

export const NAME_PROPERTY = {
  description:
    'A name to recognise the key by; white space around it is trimmed. Empty or only white ' +
    'space: 422 `string_too_short`. Control characters (CR, LF, TAB, …), bidi controls and ' +
    'invisible format characters (zero-width space, U+FEFF, …) are refused: 422 `value_error`; ' +
    'the joiners emoji are written with (ZWJ, ZWNJ) are not',
  minLength: 1,
  maxLength: 100,
  // A character the trim keeps.
  pattern: NOT_ONLY_WHITE_SPACE_PATTERN,
  example: 'analytics-team',
} as const;

/** How a key's expiry and own budget read in every schema that shows them. */
export const EXPIRES_AT_PROPERTY = {
  type: String,
  format: 'date-time',
  nullable: true,
  description:
    'When the key stops working (then `401 {"detail": "API key expired"}`); null = never',
  example: '2099-12-31T23:59:59Z',
} as const;

export const RATE_LIMIT_PROPERTY = {
  type: 'integer',
  format: 'int32',
  nullable: true,
  minimum: RATE_LIMIT_MIN,
  maximum: RATE_LIMIT_MAX,
  // The window and the classes' budgets are configured (RATE_LIMIT_*): the API's description
  // states them as this gateway enforces them, so a schema naming the defaults would contradict it.
  description:
    "Requests per rate-limit window, overriding the key class's budget; null = the class's " +
    "(the API's description gives the window and both classes' budgets)",
  example: 5000,
} as const;

/**
 * The key's name, trimmed as pydantic's `str_strip_whitespace` trims (trimWhiteSpace): a name of
 * white space only is refused as the empty one is, `string_too_short`, rather than listed as a
 * blank. Printable (PrintableName): names stored before it was checked are listed as they are.
 */
export const KeyNameField = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' ? trimWhiteSpace(value) : value,
    ),
    IsString(),
    MinCharacters(1),
    MaxCharacters(100),
    StorableText(),
    PrintableName(),
  );

/** Optional; null means no expiry. Being in the future is EXPIRES_IN_THE_FUTURE's check. */
export const ExpiresAtField = () =>
  applyDecorators(
    ApiPropertyOptional({
      ...EXPIRES_AT_PROPERTY,
      description: `${EXPIRES_AT_PROPERTY.description}. An RFC 3339 date-time with its UTC offset (\`Z\` or \`+02:00\`), in the future.`,
    }),
    IsOptional(),
    IsString(),
    IsRfc3339DateTime(),
  );

/**
 * An expiry is in the future, by the service's clock (pydantic's `FutureDatetime`), checked in
 * the same pass as every other field (field-rules.ts): a key would be born expired. Compared as
 * it is stored and enforced, to the millisecond (not to the digit, as on-demand's dates are):
 * `…12:00:00.0004Z` at a clock of `…12:00:00.000Z` would be stored as now, expired at once. A
 * key whose expiry passes in the milliseconds before it is stored is refused at its first use.
 */
export const EXPIRES_IN_THE_FUTURE: FieldRule<{ expires_at?: string | null }> = {
  field: 'expires_at',
  refuse: ({ expires_at }, now) =>
    typeof expires_at === 'string' && parseRfc3339DateTime(expires_at)! <= now
      ? { msg: 'Input should be in the future', type: 'datetime_future' }
      : undefined,
};

/** Optional; null means the key class's budget. */
export const RateLimitField = () =>
  applyDecorators(
    ApiPropertyOptional(RATE_LIMIT_PROPERTY),
    IsOptional(),
    IsInteger(),
    Min(RATE_LIMIT_MIN),
    Max(RATE_LIMIT_MAX),
  );
