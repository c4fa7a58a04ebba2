import { BucketKey, DataItem } from '../protocol';
import { SourceId } from '../sources';

/**
 * The store of items fetched from miners' stored data (GetContentsByBuckets, GetDataEntityBucket),
 * shared by every replica: on-demand queries, query_bucket and the scraping tasks read from it,
 * so nothing is fetched twice. An abstract class so that Nest can inject it by type (the
 * Postgres repository implements it; unit tests of its users may pass a fake).
 */
export abstract class ItemStore {
  /**
   * Keeps one call's checked deliveries (one miner's, fetched at one time), each of one bucket:
   * their items (merged by uri) and each bucket's fetch, together.
   */
  abstract save(...deliveries: BucketDelivery[]): Promise<void>;

  /** What was fetched of these buckets (labels: null = unlabeled), per bucket and miner. */
  abstract fetches(
    source: SourceId,
    labels: readonly (string | null)[],
    fromBucket: number,
    toBucket: number,
  ): Promise<BucketFetch[]>;

  /**
   * Stored items matching the query, newest first (datetime, then uri, descending), one per uri,
   * and whether the read stopped at its bound on rows with more left (`cut`).
   */
  abstract findPage(query: StoredItemQuery): Promise<StoredPage>;

  /** The items of findPage. */
  async find(query: StoredItemQuery): Promise<StoredItem[]> {
    return (await this.findPage(query)).items;
  }

  /**
   * Forgets items and fetches older than `date` (the network keeps 30 days); the days of items
   * dropped.
   */
  abstract deleteBefore(date: Date): Promise<number>;
}

/** What one read of the store found. */
export interface StoredPage {
  items: StoredItem[];
  /**
   * The read stopped at its bound on rows read (a post's copies at other times each take one)
   * with rows left: the store may hold more matches than `items`, though fewer than `limit`.
   */
  cut: boolean;
}

/** One checked item: its bucket and the true byte size of the record the miner sent. */
export interface ItemToStore {
  item: DataItem;
  timeBucket: number;
  contentBytes: number;
}

/** One miner's checked delivery of one bucket. */
export interface BucketDelivery {
  bucket: BucketKey;
  minerUid: number;
  minerHotkey: string;
  fetchedAt: Date;
  /** What the miner's index claimed for the bucket when it was asked. */
  claimedBytes: number;
  /** Only items that passed the checks; may be empty (the fetch itself is still worth keeping). */
  items: ItemToStore[];
}

/** What the store knows of one bucket as fetched from one miner (its newest fetch). */
export interface BucketFetch {
  bucket: BucketKey;
  minerUid: number;
  minerHotkey: string;
  fetchedAt: Date;
  claimedBytes: number;
  /** Checked items kept from that fetch, and their record bytes. */
  itemCount: number;
  bytes: number;
}

export interface StoredItemQuery {
  source: SourceId;
  /** Labels to read (null = unlabeled items); undefined = every label. */
  labels?: readonly (string | null)[];
  /** Inclusive bounds on the item's datetime; `from` null = no lower bound. */
  from: Date | null;
  to: Date;
  /** Lower-cased, without `@`; empty = any author. */
  usernames: readonly string[];
  /** Paging: only items strictly older than this (datetime, then uri); undefined = newest first. */
  before?: { datetime: Date; uri: string };
  limit: number;
}

export interface StoredItem {
  item: DataItem;
  /** True byte size of the record the item was read from. */
  contentBytes: number;
  /** Hotkeys of the miners that delivered it, and when it was last delivered. */
  deliveredBy: string[];
  fetchedAt: Date;
}
