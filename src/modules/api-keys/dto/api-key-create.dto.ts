import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { NoNulCharacter } from '../../../common/validation/no-nul';
import { API_KEY_TIERS, ApiKeyTier } from '../api-key-tier';

@ApiSchema({ name: 'APIKeyCreate' })
export class ApiKeyCreateDto {
  @ApiProperty({
    description: 'A name to recognise the key by',
    minLength: 1,
    maxLength: 100,
    example: 'analytics-team',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @NoNulCharacter()
  name: string;

  @ApiPropertyOptional({
    description: 'Key class: `regular` (100 requests/hour) or `validator` (1000 requests/hour)',
    enum: API_KEY_TIERS,
    default: 'regular',
    example: 'regular',
  })
  @IsOptional()
  @IsIn(API_KEY_TIERS)
  tier?: ApiKeyTier;
}
