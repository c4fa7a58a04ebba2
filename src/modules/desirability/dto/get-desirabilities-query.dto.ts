import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { NoNulCharacter } from '../../../common/validation/no-nul';

export class GetDesirabilitiesQueryDto {
  @ApiPropertyOptional({
    description:
      'A validator hotkey: return its current submission exactly as submitted, instead of the aggregate',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  @NoNulCharacter()
  hotkey?: string;

  @ApiPropertyOptional({
    description:
      'Shape of the aggregate list: jobs `[{id, weight, params}]`, or legacy `[{source_name, label_weights}]` ' +
      '(jobs without a label are left out). Ignored with `hotkey`.',
    enum: ['jobs', 'legacy'],
    default: 'jobs',
  })
  @IsOptional()
  @IsIn(['jobs', 'legacy'])
  format?: 'jobs' | 'legacy';
}
