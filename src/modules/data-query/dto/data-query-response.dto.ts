import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'DataQueryResponse' })
export class DataQueryResponseDto {
  @ApiProperty({ description: 'Request status', enum: ['success', 'error'], example: 'success' })
  status: 'success' | 'error';

  @ApiPropertyOptional({
    description:
      'Matching items. Every item has `uri`, `datetime`, `source` (upper case), `label` and `content`; X items carry `user`, `tweet` and `media`, Reddit items their post/comment fields.',
    type: 'array',
    items: { type: 'object', additionalProperties: true },
  })
  data?: Record<string, unknown>[];

  @ApiPropertyOptional({
    description:
      'About the request: `miners_queried`, `miners_responded`, `miners_failed` (`count` and `reasons` by kind), ' +
      '`items_returned`, `items_dropped_invalid`, `consensus` (share of returned items held by at least two miners), ' +
      '`hedged_requests`, `deadline_reached`, `processing_time_ms`, `cache_hit`; `error` when status is `error`.',
    type: 'object',
    additionalProperties: true,
    example: {
      source: 'X',
      miners_queried: 5,
      miners_responded: 4,
      miners_failed: { count: 1, reasons: { timeout: 1 } },
      items_returned: 42,
      items_dropped_invalid: 3,
      consensus: 0.81,
      hedged_requests: 1,
      deadline_reached: false,
      processing_time_ms: 212,
      cache_hit: false,
    },
  })
  meta?: Record<string, unknown>;
}
