import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { API_KEY_TIERS, ApiKeyTier } from '../../../common/auth/api-key-tier';
import { EXPIRES_AT_PROPERTY, RATE_LIMIT_PROPERTY } from './api-key-fields';

@ApiSchema({ name: 'APIKeySummary' })
export class ApiKeySummaryDto {
  @ApiProperty({ format: 'uuid', example: '0b7d5a8e-3c4f-4e1a-9f2b-6d8c1e0a4b37' })
  id: string;

  @ApiProperty({ example: 'analytics-team' })
  name: string;

  @ApiProperty({
    description: 'The first characters of the key, to recognise it',
    example: 'sk_live_3q2N',
  })
  prefix: string;

  @ApiProperty({ enum: API_KEY_TIERS, example: 'regular' })
  tier: ApiKeyTier;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' })
  created_at: string;

  // Required: always sent, null for a key never used.
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description:
      'Last authenticated use, recorded in batches (accurate to a few seconds); null = never used',
    example: '2026-11-21T12:30:00.000Z',
  })
  last_used_at: string | null;

  @ApiProperty({ example: true })
  is_active: boolean;

  // Required: always sent, null while the key is active (a key is never active again).
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the key was deactivated; null = active',
    example: null,
  })
  deactivated_at: string | null;

  @ApiProperty(EXPIRES_AT_PROPERTY)
  expires_at: string | null;

  @ApiProperty(RATE_LIMIT_PROPERTY)
  rate_limit: number | null;
}

@ApiSchema({ name: 'APIKeyList' })
export class ApiKeyListDto {
  @ApiProperty({ type: [ApiKeySummaryDto] })
  keys: ApiKeySummaryDto[];
}
