import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { FieldRules } from '../../../common/errors/field-rules';
import {
  EXPIRES_IN_THE_FUTURE,
  ExpiresAtField,
  KeyNameField,
  NAME_PROPERTY,
  RateLimitField,
} from './api-key-fields';

/**
 * `minProperties: 1` as the service's rule for an empty body (a 422 at `["body"]`), so that a
 * client or validator generated from the document refuses `{}` too. ApiSchema's options type
 * names only `name` and `description`, but every other option is written into the schema.
 */
const AT_LEAST_ONE_FIELD = { minProperties: 1 };

/** Absent fields stay as they are; `null` clears the expiry or the key's own limit. */
@ApiSchema({
  name: 'APIKeyUpdate',
  description:
    'At least one field. Absent fields are left as they are; `null` clears `expires_at` (never ' +
    "expires) or `rate_limit` (back to the key class's budget).",
  ...AT_LEAST_ONE_FIELD,
})
@FieldRules(EXPIRES_IN_THE_FUTURE)
export class ApiKeyUpdateDto {
  @ApiPropertyOptional(NAME_PROPERTY)
  // A name cannot be cleared: null is checked (and refused as a string_type error).
  @ValidateIf((_, value) => value !== undefined)
  @KeyNameField()
  name?: string;

  @ExpiresAtField()
  expires_at?: string | null;

  @RateLimitField()
  rate_limit?: number | null;
}
