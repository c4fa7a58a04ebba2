import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { Source } from '../../common/source';
import { answeredItem } from '../../network/answered-items';
import { MinerIndexService } from '../../network/index/miner-index.service';
import { NetworkService } from '../../network/network.service';
import {
  bucketEnd,
  bucketStart,
  oldestUsefulBucket,
  statisticsLabel,
} from '../../network/protocol';
import { toSourceId, toSourceName } from '../../network/sources';
import { bucketRange, QueryBucketQueryDto } from './dto/stats-requests.dto';
import {
  AgeSizeDto,
  LabelBytesDto,
  LabelSizeDto,
  QueryBucketResponseDto,
} from './dto/stats-responses.dto';
import { roundTo } from '../../common/round-to';
import { withUnprintablesEscaped } from '../../common/validation/control-characters';
import { answerTag, Conditional, conditionally } from './stats-conditions';

/** Rows of the list endpoints (top labels, ages). */
export const TOP_LIMIT = 1000;

/**
 * Statistics over the miners' index, read through the miner index from its incrementally
 * maintained totals; query_bucket's data comes from the network.
 */
@Injectable()
export class StatsService {
  private readonly cache = new Map<string, { version: string; value: object }>();

  constructor(
    private readonly index: MinerIndexService,
    private readonly network: NetworkService,
    private readonly clock: Clock,
  ) {}

  async topLabels(source: Source, ifNoneMatch?: string): Promise<Conditional<LabelSizeDto[]>> {
    const version = await this.index.totalsVersion();
    return conditionally(answerTag(['labels', source, version]), ifNoneMatch, () =>
      this.cached(`labels:${source}`, version, async () => {
        const rows = await this.index.topLabels(toSourceId(source), TOP_LIMIT);
        return rows.map((row) => ({
          label_value: row.label_value,
          content_size_bytes: Number(row.content_size_bytes),
          adj_content_size_bytes: Math.round(row.adj_content_size_bytes),
        }));
      }),
    );
  }

  /**
   * The hours of the 30-day window at this clock's now (oldestUsefulBucket, the index's own
   * cut): an hour that aged out stays in the totals until the next index sync removes it, up to
   * an interval later, and was listed meanwhile (docs/decisions.md, "Miner index and statistics").
   * The answer depends on that hour too: its cache and its tag are keyed by it.
   */
  async ages(source: Source, ifNoneMatch?: string): Promise<Conditional<AgeSizeDto[]>> {
    const oldest = oldestUsefulBucket(this.clock.now());
    const version = await this.index.totalsVersion();
    return conditionally(answerTag(['ages', source, oldest, version]), ifNoneMatch, () =>
      this.cached(`ages:${source}`, `${version}:${oldest}`, async () => {
        const rows = await this.index.ages(toSourceId(source), oldest, TOP_LIMIT);
        return rows.map((row) => ({
          time_bucket_id: row.time_bucket_id,
          content_size_bytes: Number(row.content_size_bytes),
          adj_content_size_bytes: Math.round(row.adj_content_size_bytes),
        }));
      }),
    );
  }

  /**
   * The list endpoints answer from a cache keyed by the aggregates' version, which every write
   * of the totals bumps: one tiny query per request, never a stale answer. `version`: the
   * aggregates' version read before the answer, with whatever else the answer depends on.
   */
  private async cached<T extends object>(
    key: string,
    version: string,
    compute: () => Promise<T>,
  ): Promise<T> {
    const entry = this.cache.get(key);
    if (entry?.version === version) return entry.value as T;
    const value = await compute();
    this.cache.set(key, { version, value });
    return value;
  }

  /**
   * Unknown labels give zeros, not 404. Read from the totals, so determined by their version and
   * the normalized label, as the lists are.
   */
  async bytesByLabel(label: string, ifNoneMatch?: string): Promise<Conditional<LabelBytesDto>> {
    const normalized = statisticsLabel(label);
    const version = await this.index.totalsVersion();
    return conditionally(answerTag(['bytes', normalized, version]), ifNoneMatch, async () => {
      const { bytes, adjBytes } = await this.index.bytesByLabel(normalized);
      return {
        label: normalized,
        total_bytes: bytes,
        adj_total_bytes: roundTo(adjBytes, 2),
      };
    });
  }

  /**
   * Tagged by the answer itself: it is what the network or the item store holds for the newest
   * bucket (which miner, when fetched, the items, or why none could be asked), which the
   * aggregates' version does not determine. A 304 saves sending it, not finding it.
   */
  async queryBucket(
    source: Source,
    query: QueryBucketQueryDto,
    ifNoneMatch?: string,
  ): Promise<Conditional<QueryBucketResponseDto>> {
    const answer = await this.bucketAnswer(source, query);
    return conditionally(answerTag(['query_bucket'], JSON.stringify(answer)), ifNoneMatch, () =>
      Promise.resolve(answer),
    );
  }

  /** No miner's index holds the range: said as the index not loaded yet, when it is not. */
  private async noData(shown: string, range: string): Promise<string> {
    const loaded = await this.network
      .indexFreshness()
      .then((freshness) => freshness.loaded > 0)
      .catch(() => true);
    return loaded
      ? `No data for ${shown} in ${range}`
      : `Which buckets hold data for ${shown} in ${range} is not known: the miners' data index is not loaded yet (no miner's index is loaded); ask again after the next index sync`;
  }

  private async bucketAnswer(
    source: Source,
    query: QueryBucketQueryDto,
  ): Promise<QueryBucketResponseDto> {
    // Not after the end: validation checked it (QueryBucketQueryDto's rule) at an instant no
    // later than this one.
    const { start, end } = bucketRange(query, this.clock.now());
    const sourceId = toSourceId(source);
    const label = query.label === undefined ? undefined : statisticsLabel(query.label, source);
    const labelId = label === undefined ? undefined : await this.index.labelId(label);
    const range = `buckets ${start}..${end}`;
    // The label is any text the client sent: its control and format characters are written as
    // escapes, as an echoed task id's are (quoted-id.ts).
    const shown = label === undefined ? 'any label' : withUnprintablesEscaped(label);
    // No index loaded, no label is known: said as such, not as "no data" (a review's finding).
    if (label !== undefined && labelId === undefined)
      return { status: 'error', message: await this.noData(`label ${shown}`, range) };

    // An hour held only by miners that may not be asked now is still read: from an earlier
    // fetch, or answered with why no holder can be asked. "No data" there was untrue while the
    // statistics counted its bytes (an error texts audit's finding).
    const bucket =
      (await this.index.latestBucket(sourceId, labelId, start, end)) ??
      (await this.index.latestBucket(sourceId, labelId, start, end, { askable: false }));
    if (bucket === undefined) return { status: 'error', message: await this.noData(shown, range) };
    const answer = await this.network.readBucket(sourceId, bucket, labelId);
    if (answer.status === 'error') return answer;
    return {
      status: 'success',
      cached: answer.cached,
      fetched_at: answer.fetchedAt.toISOString(),
      miner: answer.miner,
      bucket: {
        id: bucket,
        start: bucketStart(bucket).toISOString(),
        end: bucketEnd(bucket).toISOString(),
        source: toSourceName(source),
        label: answer.label,
        expected_size: answer.claimedBytes,
      },
      data: answer.items.map(answeredItem),
    };
  }
}
