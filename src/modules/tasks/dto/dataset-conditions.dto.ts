import type { ApiHeaderOptions } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { ENTITY_TAGS_MAX_LENGTH } from '../../../common/http/entity-tags';
import { MaxCharacters } from '../../../common/validation/text-length';

/** The longest HTTP-date (RFC 9110 §5.6.7): RFC 850's with a Wednesday. */
const HTTP_DATE_MAX_LENGTH = 33;

/**
 * The download's conditional headers as documented (RFC 9110 §13.1), in the order the document
 * lists them; each `maxLength` is held by DatasetConditionsDto.
 */
export const DATASET_CONDITION_HEADERS: ApiHeaderOptions[] = [
  {
    name: 'If-Modified-Since',
    required: false,
    description:
      'An HTTP-date, such as the `Last-Modified` of an earlier download of this format: answered ' +
      '304, without the body, when the file was not written after it. Ignored with ' +
      '`If-None-Match`, when it is no HTTP-date (a longer value than 33 characters is a 422), ' +
      'when it is later than the server’s time, or while the time the file was written is later ' +
      'than the server’s (another server’s clock ahead)',
    schema: { type: 'string', maxLength: HTTP_DATE_MAX_LENGTH },
  },
  {
    name: 'If-Unmodified-Since',
    required: false,
    description:
      'An HTTP-date: answered 412, without the file, when the file was written after it (its ' +
      '`Last-Modified` is later). Ignored with `If-Match`, or when it is no HTTP-date (a longer ' +
      'value than 33 characters is a 422)',
    schema: { type: 'string', maxLength: HTTP_DATE_MAX_LENGTH },
  },
  {
    name: 'If-None-Match',
    required: false,
    description:
      'The `ETag` of an earlier download of this format (or `*`): answered 304, without the body, while it ' +
      'names the current file',
    schema: { type: 'string', maxLength: ENTITY_TAGS_MAX_LENGTH },
  },
  {
    name: 'If-Match',
    required: false,
    description:
      'The `ETag` of the file the client holds (a list of them, or `*` for any): answered 412, without ' +
      'the file, when it names another file than the current one. Compared strongly: a weak tag ' +
      '(`W/"…"`) names no file. Looked at before `If-None-Match`',
    schema: { type: 'string', maxLength: ENTITY_TAGS_MAX_LENGTH },
  },
];

/**
 * The conditional headers, by their names as Node hands them over (lower case), read through
 * `@RequestHeaders()`: one longer than its documented `maxLength` is a 422 at
 * `["header", name]`, before the task is looked up, as FastAPI answers a `Header(max_length=…)`.
 */
export class DatasetConditionsDto {
  @IsOptional()
  @IsString()
  @MaxCharacters(ENTITY_TAGS_MAX_LENGTH)
  'if-match'?: string;

  @IsOptional()
  @IsString()
  @MaxCharacters(ENTITY_TAGS_MAX_LENGTH)
  'if-none-match'?: string;

  @IsOptional()
  @IsString()
  @MaxCharacters(HTTP_DATE_MAX_LENGTH)
  'if-modified-since'?: string;

  @IsOptional()
  @IsString()
  @MaxCharacters(HTTP_DATE_MAX_LENGTH)
  'if-unmodified-since'?: string;
}
