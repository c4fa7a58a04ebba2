import { LRUCache } from 'lru-cache';
import { lruCache } from '../../common/lru-cache';

/** A label's row in `labels`. */
export interface LabelRow {
  id: number;
  value: string;
}

/**
 * The ids of labels already read or created, for the next syncs. A label's id never changes, but
 * a label no index names any longer is deleted (IndexLabelsRepository.dropUnused), by any
 * replica: an id cached may be gone, which the index replace finds under the totals lock and
 * answers by clearing the cache and starting over. Bounded, because the labels miners index
 * come and go with the subnet's 30-day window (hashtags above all) and a process runs for
 * months: the least recently used ones are read again when they come back.
 */
export class LabelIdCache {
  private readonly ids: LRUCache<string, number>;

  constructor(max: number) {
    this.ids = lruCache(max);
  }

  /**
   * The id of every label given, `create` making (or reading) the rows of those the cache does
   * not hold. The answer holds them all, however many: the cache's bound never drops one a
   * caller is about to use.
   */
  async resolve(
    labels: Iterable<string>,
    create: (missing: string[]) => Promise<LabelRow[]>,
  ): Promise<Map<string, number>> {
    const resolved = new Map<string, number>();
    const missing = new Set<string>();
    for (const label of labels) {
      const id = this.ids.get(label);
      if (id === undefined) missing.add(label);
      else resolved.set(label, id);
    }
    if (missing.size > 0) {
      for (const row of await create([...missing])) {
        resolved.set(row.value, row.id);
        this.ids.set(row.value, row.id);
      }
    }
    return resolved;
  }

  /** Forgets the ids of `labels` (deleted by this replica). */
  forget(labels: readonly string[]): void {
    for (const label of labels) this.ids.delete(label);
  }

  /** Forgets every id: one of them was found deleted. */
  clear(): void {
    this.ids.clear();
  }

  get size(): number {
    return this.ids.size;
  }
}
