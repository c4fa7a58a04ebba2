import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { API_KEY_TIERS, ApiKeyTier } from '../../../common/auth/api-key-tier';
import { EXPIRES_AT_PROPERTY, RATE_LIMIT_PROPERTY } from './api-key-fields';

@ApiSchema({ name: 'APIKeyResponse' })
export class ApiKeyCreatedDto {
  @ApiProperty({
    description: 'The new key. This is the only time it is shown; only its hash is stored.',
    example: 'sk_live_3q2N0v1b2Yk4lWQyZr8b7m0eHq1cJkP5sV9tD6fG2xA',
  })
  key: string;

  @ApiProperty({ example: 'analytics-team' })
  name: string;

  @ApiProperty({
    description: 'Identifier of the key (usable for deactivation)',
    format: 'uuid',
    example: '0b7d5a8e-3c4f-4e1a-9f2b-6d8c1e0a4b37',
  })
  id: string;

  @ApiProperty({ enum: API_KEY_TIERS, example: 'regular' })
  tier: ApiKeyTier;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' })
  created_at: string;

  @ApiProperty(EXPIRES_AT_PROPERTY)
  expires_at: string | null;

  @ApiProperty(RATE_LIMIT_PROPERTY)
  rate_limit: number | null;
}
