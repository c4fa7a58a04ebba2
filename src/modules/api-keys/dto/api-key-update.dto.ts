import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { ExpiresAtField, KeyNameField, NAME_PROPERTY, RateLimitField } from './api-key-fields';

/** Absent fields stay as they are; `null` clears the expiry or the key's own limit. */
@ApiSchema({
  name: 'APIKeyUpdate',
  description:
    'At least one field. Absent fields are left as they are; `null` clears `expires_at` (never ' +
    "expires) or `rate_limit` (back to the key class's budget).",
})
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
