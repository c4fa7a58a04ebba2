import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { validationCase } from '../../../common/errors/error-cases';
import { ENTITY_TAGS_MAX_LENGTH } from '../../../common/http/entity-tags';
import { MaxCharacters } from '../../../common/validation/text-length';

/** Behind a key, and revalidated each time: any write of the totals changes the answers. */
export const STATS_CACHE_CONTROL = 'private, no-cache';

/**
 * The headers every statistics answer is sent with, the 304 too (RFC 9110 §15.4.5 has a 304
 * send the ETag and Cache-Control a 200 would).
 */
export const STATS_ANSWER_HEADERS = {
  ETag: {
    description:
      'A weak tag of the answer: sent back as `If-None-Match`, it is answered 304 without the ' +
      'body while the answer is the same. The same on every server for the same data',
    schema: { type: 'string', pattern: '^W/"[0-9a-f]{32}"$', maxLength: 37 },
  },
  'Cache-Control': {
    description:
      'A client may keep the answer, but asks again (If-None-Match) before using it; no shared ' +
      'cache keeps it (it is behind a key)',
    schema: { type: 'string', enum: [STATS_CACHE_CONTROL] },
  },
};

/** The 422 of an If-None-Match longer than its `maxLength`. */
export const IF_NONE_MATCH_TOO_LONG = validationCase(
  'ifNoneMatchTooLong',
  `An If-None-Match longer than ${ENTITY_TAGS_MAX_LENGTH} characters`,
  {
    loc: ['header', 'if-none-match'],
    msg: `String should have at most ${ENTITY_TAGS_MAX_LENGTH} characters`,
    type: 'string_too_long',
    ctx: { max_length: ENTITY_TAGS_MAX_LENGTH },
  },
);

/**
 * The conditional request a statistics operation takes, as the document shows it: the
 * If-None-Match header and the 304. The 200's headers are STATS_ANSWER_HEADERS, the 422 is
 * IF_NONE_MATCH_TOO_LONG (each operation lists its own).
 */
export const ConditionalAnswer = () =>
  applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description:
        'The `ETag` of an earlier answer to the same request (a list of them, or `*`): answered ' +
        '304, without the body, while it names the current answer. Compared weakly (`W/"…"` and ' +
        '`"…"` name the same answer). A 304 counts against the key’s rate limit as a 200 does',
      schema: { type: 'string', maxLength: ENTITY_TAGS_MAX_LENGTH },
    }),
    ApiResponse({
      status: 304,
      description:
        '`If-None-Match` names the current answer: the copy the client holds is this answer. No body',
      headers: STATS_ANSWER_HEADERS,
    }),
  );

/**
 * The conditional header, by its name as Node hands it over (lower case), read through
 * `@RequestHeaders()`: longer than its documented `maxLength`, a 422 at `["header", name]`.
 */
export class StatsConditionsDto {
  @IsOptional()
  @IsString()
  @MaxCharacters(ENTITY_TAGS_MAX_LENGTH)
  'if-none-match'?: string;
}
