import { LRUCache } from 'lru-cache';
import { lruCache } from '../../common/lru-cache';
import { ApiKeyEntity } from './api-key.entity';

/**
 * Keys by hash, the most recent `max` for `ttl` ms, which a change drops by the key's id at the
 * cost of one lookup: each cached key's hash is indexed by its id, the index kept by the cache's
 * own dispose hook. Found by scanning the whole cache for the id, a change cost about 3.3 ms of
 * blocked event loop at 10,000 keys, on every replica for every change announced: 1,000
 * revocations by a script, some 3.3 s each (an audit's finding).
 */
export class KeyCache {
  private readonly byHash: LRUCache<string, ApiKeyEntity>;
  /** Each cached key's hash by its id (a key's hash never changes). */
  private readonly hashById = new Map<string, string>();

  constructor(max: number, ttl: number) {
    this.byHash = lruCache<string, ApiKeyEntity>(max, {
      ttl,
      // Evicted, expired or deleted, the key leaves the index too; replaced (`set`), it stays.
      dispose: (key, hash, reason) => {
        if (reason !== 'set' && this.hashById.get(key.id) === hash) this.hashById.delete(key.id);
      },
    });
  }

  get(hash: string): ApiKeyEntity | undefined {
    return this.byHash.get(hash);
  }

  set(hash: string, key: ApiKeyEntity): void {
    this.byHash.set(hash, key);
    this.hashById.set(key.id, hash);
  }

  /** Drops the key with this id, when it is cached. */
  deleteById(id: string): void {
    const hash = this.hashById.get(id);
    if (hash !== undefined) this.byHash.delete(hash);
  }
}
