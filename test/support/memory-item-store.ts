import { bucketKeyOf } from '../../src/network/stored/bucket-selection';
import {
  BucketDelivery,
  BucketFetch,
  ItemStore,
  StoredItem,
  StoredItemQuery,
  StoredPage,
} from '../../src/network/stored/item-store';

/**
 * The item store's contract kept in memory, for unit specs of what reads and writes it: one row
 * per uri, filed under its bucket's label, and one fetch row per bucket and miner.
 */
export class MemoryItemStore extends ItemStore {
  /** Every delivery saved, in order. */
  readonly deliveries: BucketDelivery[] = [];
  /** Saves fail while set, as with Postgres away. */
  fail = false;
  readonly items = new Map<string, StoredItem & { label: string | null; source: number }>();
  readonly fetchRows = new Map<string, BucketFetch>();

  save(...deliveries: BucketDelivery[]): Promise<void> {
    if (this.fail) return Promise.reject(new Error('Postgres is away'));
    this.deliveries.push(...deliveries);
    for (const delivery of deliveries) this.keep(delivery);
    return Promise.resolve();
  }

  private keep(delivery: BucketDelivery): void {
    let bytes = 0;
    for (const { item, contentBytes } of delivery.items) {
      bytes += contentBytes;
      const old = this.items.get(item.uri);
      const deliveredBy = [...new Set([...(old?.deliveredBy ?? []), delivery.minerHotkey])];
      this.items.set(item.uri, {
        item,
        contentBytes,
        deliveredBy,
        fetchedAt: delivery.fetchedAt,
        label: delivery.bucket.label,
        source: delivery.bucket.source,
      });
    }
    this.fetchRows.set(`${bucketKeyOf(delivery.bucket)}|${delivery.minerUid}`, {
      bucket: delivery.bucket,
      minerUid: delivery.minerUid,
      minerHotkey: delivery.minerHotkey,
      fetchedAt: delivery.fetchedAt,
      claimedBytes: delivery.claimedBytes,
      itemCount: delivery.items.length,
      bytes,
    });
  }

  fetches(
    source: number,
    labels: readonly (string | null)[],
    from: number,
    to: number,
  ): Promise<BucketFetch[]> {
    return Promise.resolve(
      [...this.fetchRows.values()].filter(
        ({ bucket }) =>
          bucket.source === source &&
          labels.includes(bucket.label) &&
          bucket.timeBucket >= from &&
          bucket.timeBucket <= to,
      ),
    );
  }

  findPage(query: StoredItemQuery): Promise<StoredPage> {
    const time = (entry: StoredItem) => Date.parse(entry.item.datetime);
    const rows = [...this.items.values()]
      .filter(
        (entry) =>
          entry.source === query.source &&
          (query.labels === undefined || query.labels.includes(entry.label)) &&
          (query.from === null || time(entry) >= query.from.getTime()) &&
          time(entry) <= query.to.getTime() &&
          (query.usernames.length === 0 ||
            query.usernames.includes(
              entry.item.source === 'X' ? entry.item.user.username.toLowerCase() : '',
            )) &&
          (query.before === undefined ||
            time(entry) < query.before.datetime.getTime() ||
            (time(entry) === query.before.datetime.getTime() && entry.item.uri < query.before.uri)),
      )
      .sort((a, b) => time(b) - time(a) || (b.item.uri < a.item.uri ? -1 : 1));
    return Promise.resolve({ items: rows.slice(0, query.limit), cut: false });
  }

  deleteBefore(): Promise<number> {
    return Promise.resolve(0);
  }
}
