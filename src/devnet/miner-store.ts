import {
  BucketKey,
  CompressedLabelBuckets,
  CompressedMinerIndex,
  DataItem,
  normalizeLabel,
  timeBucketId,
} from '../network/protocol';
import { SOURCE_NAMES, SourceName } from '../network/sources';
import { compileQuery } from '../network/query-matcher';
import { WireDataEntity } from '../network/sn13/entities';
import { OnDemandInputs } from './miner-requests';
import { sourceIdOf, toWireEntity } from './miner-records';

/**
 * What an honest miner answers, precomputed from the items it holds: its items per source
 * newest first, the entity (stored record) of each, its entities per bucket, and its
 * compressed index, whose sizes are the byte lengths of the records.
 */

interface Dated {
  uri: string;
  datetime: string;
}

/** Map key of a bucket; JSON keeps a null label apart from an empty one. */
function bucketKey(sourceId: number, label: string | null, bucket: number): string {
  return JSON.stringify([sourceId, label, bucket]);
}

/** A bucket as the miner looks it up: its label lower-cased, as miners store labels. */
function storeKeyOf(key: BucketKey): string {
  const label = key.label === null ? null : normalizeLabel(key.label);
  return bucketKey(key.source, label, key.timeBucket);
}

/**
 * The items newest first, ties broken by uri so the order never depends on insertion order, and
 * their times (ms). Each date is parsed once, not at every comparison: a devnet of 8 miners
 * sorts tens of thousands of items when it starts.
 */
function sortedNewestFirst(items: readonly Dated[]): { order: number[]; times: number[] } {
  const times = items.map((item) => Date.parse(item.datetime));
  const order = items.map((_, index) => index);
  order.sort((left, right) => {
    const byDate = times[right] - times[left];
    if (byDate !== 0) return byDate;
    const [a, b] = [items[left].uri, items[right].uri];
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return { order, times: order.map((index) => times[index]) };
}

export class MinerStore {
  private readonly bySource: Record<SourceName, DataItem[]> = { X: [], REDDIT: [] };
  /** Each source's item times (ms), newest first, parallel to `bySource`. */
  private readonly times: Record<SourceName, number[]> = { X: [], REDDIT: [] };
  private readonly entities = new Map<string, WireDataEntity>();
  private readonly buckets = new Map<string, WireDataEntity[]>();
  private readonly bucketItemLists = new Map<string, DataItem[]>();
  private readonly index: CompressedMinerIndex;

  constructor(items: readonly DataItem[]) {
    for (const item of items) {
      this.bySource[item.source].push(item);
      this.entities.set(item.uri, toWireEntity(item));
    }
    for (const source of SOURCE_NAMES) {
      const held = this.bySource[source];
      const { order, times } = sortedNewestFirst(held);
      this.bySource[source] = order.map((index) => held[index]);
      this.times[source] = times;
    }
    this.index = this.buildIndex(items);
  }

  /** Every held item of the source, newest first. */
  itemsOf(source: SourceName): readonly DataItem[] {
    return this.bySource[source];
  }

  entityOf(item: DataItem): WireDataEntity {
    return this.entities.get(item.uri) ?? toWireEntity(item);
  }

  /**
   * Every held item answering an OnDemandRequest, newest first (the caller applies the limit):
   * the item at `url` when one is given, else by the gateway's matching rules, with every
   * keyword (`keyword_mode` all) or any of them.
   */
  matching(query: OnDemandInputs): DataItem[] {
    if (query.url !== null)
      return this.bySource[query.source].filter((item) => item.uri === query.url);
    // The date range by binary search over the sorted times (the matcher would parse every
    // item's date on every call: most of a simulated miner's time), the rest by the rules.
    const items = this.inRange(query);
    const matcher = compileQuery({ ...query, start_date: null, end_date: null });
    return items.filter((item) => matcher.matches(item));
  }

  private inRange(query: OnDemandInputs): DataItem[] {
    const times = this.times[query.source];
    const end = query.end_date?.getTime() ?? Infinity;
    const start = query.start_date?.getTime() ?? -Infinity;
    const first = firstIndex(times, (time) => time <= end);
    const last = firstIndex(times, (time) => time < start);
    return this.bySource[query.source].slice(first, last);
  }

  minerIndex(): CompressedMinerIndex {
    return this.index;
  }

  bucket(key: BucketKey): WireDataEntity[] {
    return this.buckets.get(storeKeyOf(key)) ?? [];
  }

  /** The items behind `bucket(key)`, in the same order. */
  bucketItems(key: BucketKey): readonly DataItem[] {
    return this.bucketItemLists.get(storeKeyOf(key)) ?? [];
  }

  private buildIndex(items: readonly DataItem[]): CompressedMinerIndex {
    // source id → label → bucket → bytes
    const sizes = new Map<number, Map<string | null, Map<number, number>>>();
    const { order, times } = sortedNewestFirst(items);
    for (const [rank, index] of order.entries()) {
      const item = items[index];
      const sourceId = sourceIdOf(item);
      const bucket = timeBucketId(new Date(times[rank]));
      const entity = this.entities.get(item.uri)!;
      const key = bucketKey(sourceId, item.label, bucket);
      const entities = this.buckets.get(key) ?? [];
      entities.push(entity);
      this.buckets.set(key, entities);
      const bucketItems = this.bucketItemLists.get(key) ?? [];
      bucketItems.push(item);
      this.bucketItemLists.set(key, bucketItems);

      const labels = sizes.get(sourceId) ?? new Map<string | null, Map<number, number>>();
      sizes.set(sourceId, labels);
      const buckets = labels.get(item.label) ?? new Map<number, number>();
      labels.set(item.label, buckets);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + entity.content_size_bytes);
    }

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

/** The first index of a descending list where `holds` becomes true (it stays true after). */
function firstIndex(times: readonly number[], holds: (time: number) => boolean): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (holds(times[middle])) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Null (unlabeled) first, then alphabetical, so the index is stable. */
function compareLabels(left: string | null, right: string | null): number {
  if (left === right) return 0;
  if (left === null) return -1;
  if (right === null) return 1;
  return left < right ? -1 : 1;
}
