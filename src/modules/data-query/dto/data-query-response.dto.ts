import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { DataItemDto, dataItemsProperty } from './data-item.dto';
import { RedditItemDto } from './reddit-item.dto';
import { XItemDto } from './x-item.dto';
import { QUERY_FAILURE_REASONS, QueryFailureReason } from '../../../network/query-failures';
import { SOURCE_NAMES, SourceName } from '../../../network/sources';
import { ANSWER_ORIGINS, AnswerOrigin } from '../../../network/protocol';

/** What each failure reason means, for the document; the compiler wants every reason here. */
const FAILURE_REASONS: Record<QueryFailureReason, string> = {
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
  no_budget:
    'not called: this validator’s call budget for the miner is spent, or could not be read (database unavailable)',
  shutdown:
    'abandoned: this gateway was shutting down (requests are answered before it stops its calls, so only its background jobs meet this)',
  invalid_items:
    'answered with items, and the checks dropped every one (not matching the query, of another source, malformed; from stored data, not of the bucket’s hour or label): a lie, not "no data"',
};

const COUNT = { type: 'integer', format: 'int32', minimum: 0 } as const;

@ApiSchema({
  name: 'StoredDataMeta',
  description:
    'How an answer from stored data was made: the hour buckets the query covers, where each came from, ' +
    'and how old the data is',
})
export class StoredDataMetaDto {
  @ApiProperty({
    description:
      '`complete`: the query names labels (X hashtags or cashtags, Reddit subreddits), their buckets ' +
      'were planned, and every miner’s copy of them that the miners’ indexes list was read (from the ' +
      'store or fetched now); `partial`: it names none (or mixes them with other keywords ' +
      'in `any` mode), so it was answered only from what the gateway already stored (and when that ' +
      'holds nothing, `status` is `error` and `meta.error` says so: not "no data", which was not looked for). ' +
      'Also `partial` when no miner’s data index is loaded yet (none synced since the start, or every ' +
      'sync failed): which miners hold the labels is not known, so only stored items answer, and when there ' +
      'are none `status` is `error` with a `meta.error` that says when to try again. Also `partial` when ' +
      '`buckets_missing` is above 0: the hours missing may hold matches that `data` lacks; when a miner ' +
      'whose index lists a planned hour was not read (miners scrape on their own, so each holder of an ' +
      'hour holds other posts, and a query asks two of them at most): its posts may match; and when the ' +
      'range starts more than 30 days back (the network keeps 30 days; older hours are not searched)',
    enum: ['complete', 'partial'],
    example: 'complete',
  })
  coverage: 'complete' | 'partial';

  @ApiProperty({ ...COUNT, description: 'Hour buckets planned for the answer', example: 6 })
  buckets_planned: number;

  @ApiProperty({
    ...COUNT,
    description: 'Of those, fresh in the store (no miner called)',
    example: 4,
  })
  buckets_from_store: number;

  @ApiProperty({ ...COUNT, description: 'Fetched from miners for this query', example: 2 })
  buckets_fetched_now: number;

  @ApiProperty({
    ...COUNT,
    description:
      'Neither fresh in the store nor delivered before the deadline (no budget, no answer, or ' +
      'every record delivered dropped by the checks)',
    example: 0,
  })
  buckets_missing: number;

  @ApiProperty({
    description:
      'When the oldest data in `data` was fetched from a miner (null when `data` is empty)',
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-11-24T09:12:00.000Z',
  })
  oldest_data_fetched_at: string | null;
}

@ApiSchema({ name: 'MinersFailed' })
export class MinersFailedDto {
  @ApiProperty({
    ...COUNT,
    description:
      'Queried miners that gave no usable answer: their call failed, or every item they answered ' +
      'was dropped by the checks (`invalid_items`)',
    example: 1,
  })
  count: number;

  @ApiProperty({
    description:
      'The failed miners by reason, each under its first failure, so that the values add up ' +
      'to `count`; only reasons that occurred are present. ' +
      QUERY_FAILURE_REASONS.map((reason) => `\`${reason}\`: ${FAILURE_REASONS[reason]}`).join(
        '; ',
      ) +
      '.',
    type: 'object',
    properties: Object.fromEntries(
      QUERY_FAILURE_REASONS.map((reason) => [
        reason,
        { ...COUNT, minimum: 1, description: FAILURE_REASONS[reason] },
      ]),
    ),
    additionalProperties: false,
    example: { timeout: 1 },
  })
  reasons: Partial<Record<QueryFailureReason, number>>;
}

@ApiSchema({
  name: 'OnDemandMeta',
  description:
    "How the answer was obtained: the hosted API's fields (`miners_queried`, `miners_responded`, " +
    '`non_responsive_miners`, `empty_response_miners`, `validation_success_rate`, `items_returned`, ' +
    '`processing_time_ms`, `api_version`, `no_data_available`) beside the gateway’s own.',
})
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

  @ApiProperty({
    ...COUNT,
    description:
      'Asked miners without an answer when the response was made (`miners_queried` − `miners_responded`): ' +
      'failed or refused calls, and miners still silent at the deadline or when the quorum was reached',
    example: 1,
  })
  non_responsive_miners: number;

  @ApiProperty({ ...COUNT, description: 'Miners that answered with no items at all', example: 0 })
  empty_response_miners: number;

  @ApiProperty({
    description:
      '`n/m`: of the `m` miners that answered (`miners_responded`), `n` answered only items that passed ' +
      'the checks (well formed and matching the query; an empty answer passes). `0/0` when none answered. ' +
      '(The hosted API counts the sampled items it re-scraped instead; the string has the same form.)',
    pattern: '^[0-9]+/[0-9]+$',
    // Two int32 counts and the slash.
    maxLength: 21,
    example: '3/4',
  })
  validation_success_rate: string;

  @ApiProperty({ type: MinersFailedDto })
  miners_failed: MinersFailedDto;

  @ApiProperty({
    ...COUNT,
    description:
      'Miners that might have been asked live (OnDemandRequest) but were not, because this ' +
      'validator’s call budget for them is spent for now (MINER_CALL_BUDGETS, shared with the ' +
      'validator on its hotkey); counted neither in `miners_queried` nor in `miners_failed`. ' +
      'Beside `miners_failed`, it tells "every miner asked failed" from "the miners left to ask ' +
      'failed while the others were out of budget". On a stored answer, the count of the live ' +
      'round considered before it (all the miners when their spent budgets sent the query to ' +
      'stored data); 0 when none was considered (ON_DEMAND_MODE `stored`, or no miner might ' +
      'serve on-demand queries)',
    example: 0,
  })
  miners_without_budget: number;

  @ApiProperty({ ...COUNT, maximum: 1000, description: 'Length of `data`', example: 42 })
  items_returned: number;

  @ApiProperty({
    ...COUNT,
    description:
      'Items the answer checks dropped: malformed, a uri that does not name the item, outside the ' +
      "query, a post twice in one answer, or past the query's limit in a miner's answer (not read)",
    example: 3,
  })
  items_dropped_invalid: number;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    maximum: 1,
    description:
      'Share of the returned items held by at least two operators (miners of distinct coldkeys)',
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
    description:
      'True when answered from the cache of identical queries (60 s), or by sharing an identical query in flight',
    example: false,
  })
  cache_hit: boolean;

  @ApiProperty({
    description: 'Version of the answer shape: `1.0`, the hosted on-demand API’s',
    enum: ['1.0'],
    example: '1.0',
  })
  api_version: '1.0';

  @ApiProperty({
    description:
      'True only when `status` is `success` and `data` is empty: the miners (or the stored data) were ' +
      'searched and nothing matched. False on every `error` (miners unreachable, no index loaded yet…: ' +
      'nothing was looked for, so it is no "no data"; see `meta.error`), and on a stored answer whose ' +
      '`coverage` is `partial` (hours or holders it needed were not read: `stored.coverage`). Always present (the hosted API ' +
      'sends it only when true); its clients are told to check it.',
    example: false,
  })
  no_data_available: boolean;

  @ApiProperty({
    description:
      '`live`: answered by asking miners (OnDemandRequest); `stored`: answered from the data miners store ' +
      '(GetContentsByBuckets)',
    enum: ANSWER_ORIGINS,
    example: 'live',
  })
  origin: AnswerOrigin;

  @ApiPropertyOptional({
    description: 'Present when `origin` is `stored` (absent from live answers)',
    type: StoredDataMetaDto,
  })
  stored?: StoredDataMetaDto;
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
