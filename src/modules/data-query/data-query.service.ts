import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ResponseCache } from '../../common/redis/response-cache';
import { composed } from '../../common/characters';
import { Clock } from '../../common/clock/clock';
import { SingleFlight } from '../../common/single-flight';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { answeredItem } from '../../network/answered-items';
import { NetworkService } from '../../network/network.service';
import { NetworkQueryResult, StoredCounts } from '../../network/query-result';
import { authorKey, NetworkQuery } from '../../network/protocol';
import { toSourceName } from '../../network/sources';
import { DataQueryRequestDto, queryRange } from './dto/data-query-request.dto';
import { DataQueryResponseDto, StoredDataMetaDto } from './dto/data-query-response.dto';
import { ON_DEMAND_CACHE_KEYS } from './on-demand-cache-keys';

const DEFAULT_LIMIT = 100;

@Injectable()
export class DataQueryService {
  constructor(
    private readonly network: NetworkService,
    private readonly cache: ResponseCache,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Identical queries under way in this process, by cache key: one arriving meanwhile joins the
   * first rather than fanning out again and spending the miners' hourly calls twice
   * (docs/decisions.md, "Identical queries in flight").
   */
  private readonly inFlight = new SingleFlight<string, DataQueryResponseDto>();

  /**
   * Answers from the network, or from the cache for an identical query within the TTL, or with
   * the answer of an identical query in flight (`cache_hit: true`, an error shared too). Errors
   * of the network (no miners, all failing) are a 200 with `status: "error"`, as the original.
   */
  async query(request: DataQueryRequestDto): Promise<DataQueryResponseDto> {
    const started = performance.now();
    const key = cacheKey(request);
    const joined = this.inFlight.has(key);
    const response = await this.inFlight.run(key, () => this.answer(request, key));
    if (!joined) return response;
    this.metrics.recordOnDemandAnswer(response.meta.origin, response.status);
    return {
      ...response,
      meta: { ...response.meta, cache_hit: true, processing_time_ms: elapsed(started) },
    };
  }

  /** The answer of the cache or, missing there, of the network (cached when it may be). */
  private async answer(request: DataQueryRequestDto, key: string): Promise<DataQueryResponseDto> {
    const started = performance.now();
    const query = toNetworkQuery(request, this.clock.now());
    const ttl = this.config.network.queryCacheTtlSeconds;
    // No cache (a TTL of 0): nothing to look up.
    const cached = ttl > 0 ? await this.cache.get<DataQueryResponseDto>(key) : undefined;
    if (cached) {
      this.metrics.recordOnDemandAnswer(cached.meta.origin, cached.status);
      return {
        ...cached,
        meta: { ...cached.meta, cache_hit: true, processing_time_ms: elapsed(started) },
      };
    }

    const result = await this.network.query(query);
    const response: DataQueryResponseDto = {
      status: result.error ? 'error' : 'success',
      data: result.items.map(answeredItem),
      meta: {
        ...(result.error ? { error: result.error } : {}),
        source: toSourceName(query.source),
        miners_queried: result.minersQueried,
        miners_responded: result.minersResponded,
        non_responsive_miners: result.minersQueried - result.minersResponded,
        empty_response_miners: result.minersEmpty,
        validation_success_rate: `${result.minersPassedChecks}/${result.minersResponded}`,
        miners_failed: result.minersFailed,
        miners_without_budget: result.minersWithoutBudget,
        items_returned: result.items.length,
        items_dropped_invalid: result.itemsDroppedInvalid,
        consensus: result.consensus,
        hedged_requests: result.hedged,
        deadline_reached: result.deadlineReached,
        processing_time_ms: elapsed(started),
        cache_hit: false,
        api_version: '1.0',
        no_data_available: nothingMatched(result),
        origin: result.origin,
        ...(result.stored ? { stored: storedMeta(result.stored) } : {}),
      },
    };
    this.metrics.recordOnDemandAnswer(result.origin, response.status);
    if (cacheable(result)) await this.cache.set(key, response, ttl);
    return response;
  }
}

/**
 * "Nothing matched", as the hosted API's clients read `no_data_available`: a success with no
 * items whose every place was searched. Not an error (it looked for nothing), nor a stored
 * answer that is `partial` (hours it needed were neither stored nor fetched in time, so they
 * may hold matches: it said "no data" of hours it never read).
 */
function nothingMatched(result: NetworkQueryResult): boolean {
  return !result.error && result.items.length === 0 && result.stored?.coverage !== 'partial';
}

/**
 * Not an error (it would be repeated for the whole TTL while it passes), nor a stored answer the
 * deadline cut: its fetches go on and store their items, for the next identical query to find.
 * A live answer the deadline cut is cached: nothing of its late miners is kept, and asking them
 * again at once would spend their calls on the same round.
 */
function cacheable(result: NetworkQueryResult): boolean {
  return !result.error && !(result.origin === 'stored' && result.deadlineReached);
}

function storedMeta(stored: StoredCounts): StoredDataMetaDto {
  return {
    coverage: stored.coverage,
    buckets_planned: stored.buckets.planned,
    buckets_from_store: stored.buckets.fromStore,
    buckets_fetched_now: stored.buckets.fetchedNow,
    buckets_missing: stored.buckets.missing,
    oldest_data_fetched_at: stored.oldestFetchedAt?.toISOString() ?? null,
  };
}

/**
 * The query miners and the store are asked. Its range does not end before it starts: validation
 * checked it (DataQueryRequestDto's rule) at an instant no later than `now`.
 */
function toNetworkQuery(request: DataQueryRequestDto, now: Date): NetworkQuery {
  return {
    source: request.source,
    usernames: request.usernames ?? [],
    // Composed as the plan and the matcher read them, so that miners are asked the same words.
    keywords: (request.keywords ?? []).map(composed),
    keywordMode: request.keyword_mode ?? 'all',
    ...queryRange(request, now),
    limit: request.limit ?? DEFAULT_LIMIT,
  };
}

/**
 * Identical queries share an entry; order and case of usernames/keywords do not matter. The
 * prefix names the answer's shape: `v2` since `meta.miners_without_budget`, a required field an
 * answer cached by an earlier version (a replica not yet upgraded, sharing Redis) lacks.
 */
function cacheKey(request: DataQueryRequestDto): string {
  // Typed by the request's own fields: a field added to the request does not compile until it is
  // part of the key, so two queries differing only in it cannot share an answer (a newcomer
  // audit added one that the key left out, and every test passed).
  const normalized: Record<keyof DataQueryRequestDto, unknown> = {
    source: request.source,
    usernames: (request.usernames ?? []).map(authorKey).sort(),
    keywords: (request.keywords ?? [])
      .map((keyword) => composed(keyword).trim().toLowerCase())
      .sort(),
    keyword_mode: request.keyword_mode ?? 'all',
    start_date: request.start_date ?? null,
    end_date: request.end_date ?? null,
    limit: request.limit ?? DEFAULT_LIMIT,
  };
  return `${ON_DEMAND_CACHE_KEYS}v2:${createHash('sha256').update(JSON.stringify(normalized)).digest('hex')}`;
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
