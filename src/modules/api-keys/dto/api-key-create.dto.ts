import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { API_KEY_TIERS, ApiKeyTier } from '../../../common/auth/api-key-tier';
import { FieldRules } from '../../../common/errors/field-rules';
import {
  EXPIRES_IN_THE_FUTURE,
  ExpiresAtField,
  KeyNameField,
  NAME_PROPERTY,
  RateLimitField,
} from './api-key-fields';

@ApiSchema({ name: 'APIKeyCreate' })
@FieldRules(EXPIRES_IN_THE_FUTURE)
export class ApiKeyCreateDto {
  @ApiProperty(NAME_PROPERTY)
  @KeyNameField()
  name: string;

  @ApiPropertyOptional({
    description:
      "Key class: `regular` or `validator`, each with its class's budget (the API's description gives them; a key's own `rate_limit` replaces it); absent or `null`: `regular`",
    enum: API_KEY_TIERS,
    default: 'regular',
    nullable: true,
    example: 'regular',
  })
  @IsOptional()
  @IsIn(API_KEY_TIERS)
  tier?: ApiKeyTier | null;

  @ExpiresAtField()
  expires_at?: string | null;

  @RateLimitField()
  rate_limit?: number | null;
}
