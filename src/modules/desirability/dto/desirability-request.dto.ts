import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsArray, IsObject } from 'class-validator';

@ApiSchema({ name: 'DesirabilityRequest' })
export class DesirabilityRequestDto {
  @ApiProperty({
    description:
      'The validator\'s vote: legacy items `{source_name, label_weights}` or jobs `{id, weight, params: {platform, label, keyword, post_start_datetime, post_end_datetime}}`. An empty list withdraws the vote.',
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [{ id: 'tao-x', weight: 1, params: { platform: 'x', label: '#tao', keyword: null, post_start_datetime: null, post_end_datetime: null } }],
  })
  @IsArray()
  @IsObject({ each: true })
  desirabilities: Record<string, unknown>[];
}
