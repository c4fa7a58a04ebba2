import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

export class GetDesirabilitiesQueryDto {
  @ApiPropertyOptional({ description: 'A validator hotkey: return its current unscaled submission instead of the aggregate' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  hotkey?: string;

  @ApiPropertyOptional({ description: 'Shape of the aggregate list', enum: ['jobs', 'legacy'], default: 'jobs' })
  @IsOptional()
  @IsIn(['jobs', 'legacy'])
  format?: 'jobs' | 'legacy';
}
