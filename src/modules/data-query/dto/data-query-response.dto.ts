import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { DataItemDto, dataItemsProperty, RedditItemDto, XItemDto } from './data-item.dto';
import { MINER_FAILURE_REASONS, MinerFailureReason } from '../../../network/transport/miner-client';
import { SOURCE_NAMES, SourceName } from '../../../network/sn13/sources';

/** What each failure reason means, for the document; the compiler wants every reason here. */
const FAILURE_REASONS: Record<MinerFailureReason, string> = {
  timeout: 'did not answer in time (or answered 408), or was still silent at the deadline',
  http_error: 'answered an HTTP error status other than 408, 503 and the refusals below',
  malformed: 'answered something that is not JSON',
  oversize: 'answered more than MINER_MAX_RESPONSE_BYTES (16 MB)',
  wrong_schema: 'answered JSON without the list of entities',
  network: 'could not be reached (connection refused or reset, DNS, TLS)',
  circuit_open: 'not called: its circuit breaker is open after consecutive failures',
  busy: 'answered 503, or was not called: the concurrency limit for this miner was reached',
  not_served: 'refused with 404: it does not serve on-demand queries',
  blacklisted: 'refused with 403: it blacklists this validator or its budget for it is spent',
  unauthorized: 'refused with 401: it could not verify this validator’s signature',
  address_refused: 'not called: its axon address is outside MINER_ALLOWED_NETWORKS',
  no_budget: 'not called: this validator’s call budget for the miner is spent',
};

const COUNT = { type: 'integer', format: 'int32', minimum: 0 } as const;

@ApiSchema({ name: 'MinersFailed' })
export class MinersFailedDto {
  @ApiProperty({ ...COUNT, description: 'Queried miners that gave no usable answer', example: 1 })
  count: number;

  @ApiProperty({
    description:
      'Failures by reason; only reasons that occurred are present. ' +
      MINER_FAILURE_REASONS.map((reason) => `\`${reason}\`: ${FAILURE_REASONS[reason]}`).join(
        '; ',
      ) +
      '.',
    type: 'object',
    properties: Object.fromEntries(
      MINER_FAILURE_REASONS.map((reason) => [
        reason,
        { ...COUNT, minimum: 1, description: FAILURE_REASONS[reason] },
      ]),
    ),
    additionalProperties: false,
    example: { timeout: 1 },
  })
  reasons: Partial<Record<MinerFailureReason, number>>;
}

@ApiSchema({ name: 'OnDemandMeta', description: 'How the answer was obtained' })
export class OnDemandMetaDto {
  @ApiPropertyOptional({
    description: 'Why there are no items; present only when `status` is `error`',
    example: 'No miner answered within the deadline',
  })
  error?: string;

  @ApiProperty({
    description: 'The queried source, upper case',
    enum: SOURCE_NAMES,
    example: 'X',
  })
  source: SourceName;

  @ApiProperty({ ...COUNT, description: 'Miners asked (hedges included)', example: 5 })
  miners_queried: number;

  @ApiProperty({ ...COUNT, description: 'Miners that answered in time', example: 4 })
  miners_responded: number;

  @ApiProperty({ type: MinersFailedDto })
  miners_failed: MinersFailedDto;

  @ApiProperty({ ...COUNT, maximum: 1000, description: 'Length of `data`', example: 42 })
  items_returned: number;

  @ApiProperty({
    ...COUNT,
    description: 'Items dropped because they were malformed or did not match the query',
    example: 3,
  })
  items_dropped_invalid: number;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    maximum: 1,
    description: 'Share of the returned items held by at least two miners',
    example: 0.81,
  })
  consensus: number;

  @ApiProperty({
    ...COUNT,
    description: 'Spare miners asked beside a slow one (hedging)',
    example: 1,
  })
  hedged_requests: number;

  @ApiProperty({ description: 'True when the answer was cut off at the deadline', example: false })
  deadline_reached: boolean;

  @ApiProperty({ ...COUNT, description: 'Time spent on this request', example: 212 })
  processing_time_ms: number;

  @ApiProperty({
    description: 'True when answered from the cache of identical queries (60 s)',
    example: false,
  })
  cache_hit: boolean;
}

@ApiSchema({ name: 'DataQueryResponse' })
@ApiExtraModels(XItemDto, RedditItemDto)
export class DataQueryResponseDto {
  @ApiProperty({
    description: '`error` when no miner could be asked or none answered (see `meta.error`)',
    enum: ['success', 'error'],
    example: 'success',
  })
  status: 'success' | 'error';

  @ApiProperty({
    ...dataItemsProperty(
      'Matching items, newest first: X items or Reddit items (by `source`); empty on `error`',
    ),
    maxItems: 1000,
  })
  data: DataItemDto[];

  @ApiProperty({ type: OnDemandMetaDto })
  meta: OnDemandMetaDto;
}
