import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'DataQueryResponse' })
export class DataQueryResponseDto {
  @ApiProperty({ description: 'Request status', enum: ['success', 'error'], example: 'success' })
  status: 'success' | 'error';

  @ApiPropertyOptional({
    description: 'Matching items. Every item has `uri`, `datetime`, `source` (upper case), `label` and `content`; X items carry `user`, `tweet` and `media`, Reddit items their post/comment fields.',
    type: 'array',
    items: { type: 'object', additionalProperties: true },
  })
  data?: Record<string, unknown>[];

  @ApiPropertyOptional({
    description: 'About the request: miners queried/responded/failed, items dropped, consensus, processing time, cache hit; `error` when status is `error`.',
    type: 'object',
    additionalProperties: true,
  })
  meta?: Record<string, unknown>;
}
