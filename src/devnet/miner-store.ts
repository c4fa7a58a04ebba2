import {
  CompressedLabelBuckets,
  CompressedMinerIndex,
  DataEntity,
  DataEntityBucketId,
  DataItem,
  DataSource,
  normalizeLabel,
  sourceToId,
  timeBucketId,
} from '../network/protocol';
import { compileQuery, MatchQuery } from '../network/query-matcher';

/**
 * What an honest miner answers, precomputed from the items it holds: its items per source
 * newest first, its entities per bucket, and its compressed index.
 */

export function entitySize(item: DataItem): number {
  return Buffer.byteLength(JSON.stringify(item));
}

export function toEntity(item: DataItem): DataEntity {
  return {
    uri: item.uri,
    datetime: item.datetime,
    source: item.source,
    label: item.label,
    content_size_bytes: entitySize(item),
    content: item,
  };
}

interface Dated {
  uri: string;
  datetime: string;
}

/** Map key of a bucket; JSON keeps a null label apart from an empty one. */
function bucketKey(sourceId: number, label: string | null, bucket: number): string {
  return JSON.stringify([sourceId, label, bucket]);
}

function newestFirst(left: Dated, right: Dated): number {
  const byDate = Date.parse(right.datetime) - Date.parse(left.datetime);
  // Ties broken by uri so the order never depends on insertion order.
  return byDate !== 0 ? byDate : left.uri < right.uri ? -1 : left.uri > right.uri ? 1 : 0;
}

export class MinerStore {
  private readonly bySource: Record<DataSource, DataItem[]> = { X: [], REDDIT: [] };
  private readonly buckets = new Map<string, DataEntity[]>();
  private readonly index: CompressedMinerIndex;

  constructor(items: readonly DataItem[]) {
    for (const item of items) this.bySource[item.source].push(item);
    this.bySource.X.sort(newestFirst);
    this.bySource.REDDIT.sort(newestFirst);
    this.index = this.buildIndex(items);
  }

  /** Every held item of the source, newest first. */
  itemsOf(source: DataSource): readonly DataItem[] {
    return this.bySource[source];
  }

  /** Every held item matching the query, newest first (the caller applies the limit). */
  matching(query: MatchQuery): DataItem[] {
    const matcher = compileQuery(query);
    return this.bySource[matcher.source].filter((item) => matcher.matches(item));
  }

  minerIndex(): CompressedMinerIndex {
    return this.index;
  }

  bucket(id: DataEntityBucketId): DataEntity[] {
    const label = id.label === null ? null : normalizeLabel(id.label);
    return this.buckets.get(bucketKey(id.source, label, id.time_bucket_id)) ?? [];
  }

  private buildIndex(items: readonly DataItem[]): CompressedMinerIndex {
    // source id → label → bucket → bytes
    const sizes = new Map<number, Map<string | null, Map<number, number>>>();
    for (const item of items) {
      const sourceId = sourceToId(item.source);
      const bucket = timeBucketId(new Date(item.datetime));
      const entity = toEntity(item);
      const key = bucketKey(sourceId, item.label, bucket);
      const entities = this.buckets.get(key) ?? [];
      entities.push(entity);
      this.buckets.set(key, entities);

      const labels = sizes.get(sourceId) ?? new Map<string | null, Map<number, number>>();
      sizes.set(sourceId, labels);
      const buckets = labels.get(item.label) ?? new Map<number, number>();
      labels.set(item.label, buckets);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + entity.content_size_bytes);
    }
    for (const entities of this.buckets.values()) entities.sort(newestFirst);

    const index: CompressedMinerIndex = { sources: {} };
    for (const sourceId of [...sizes.keys()].sort()) {
      const labels = sizes.get(sourceId) ?? new Map<string | null, Map<number, number>>();
      index.sources[String(sourceId)] = [...labels.keys()]
        .sort(compareLabels)
        .map((label): CompressedLabelBuckets => {
          const buckets = labels.get(label) ?? new Map<number, number>();
          const ids = [...buckets.keys()].sort((left, right) => left - right);
          return {
            label,
            time_bucket_ids: ids,
            sizes_bytes: ids.map((bucket) => buckets.get(bucket) ?? 0),
          };
        });
    }
    return index;
  }
}

/** Null (unlabeled) first, then alphabetical, so the index is stable. */
function compareLabels(left: string | null, right: string | null): number {
  if (left === right) return 0;
  if (left === null) return -1;
  if (right === null) return 1;
  return left < right ? -1 : 1;
}
