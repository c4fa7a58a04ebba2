import { setTimeout as sleep } from 'node:timers/promises';
import { ApiKeyEntity } from './api-key.entity';
import { KeyCache } from './key-cache';

function keyOf(n: number): ApiKeyEntity {
  return { id: `id-${n}`, keyHash: `hash-${n}`, name: `key ${n}` } as ApiKeyEntity;
}

/** The cache's index of ids, read from outside: what it holds is the point of the class. */
function indexSizeOf(cache: KeyCache): number {
  return (cache as unknown as { hashById: Map<string, string> }).hashById.size;
}

describe(KeyCache.name, () => {
  it('drops the key of an id among many, and keeps the others', () => {
    const cache = new KeyCache(10_000, 60_000);
    for (let n = 0; n < 5000; n++) cache.set(`hash-${n}`, keyOf(n));
    cache.deleteById('id-2500');
    cache.deleteById('id-unknown');
    expect(cache.get('hash-2500')).toBeUndefined();
    for (const n of [0, 2499, 2501, 4999]) expect(cache.get(`hash-${n}`)).toEqual(keyOf(n));
    expect(indexSizeOf(cache)).toBe(4999);
  });

  it('drops a key cached again under its hash (a new read of it)', () => {
    const cache = new KeyCache(10, 60_000);
    cache.set('hash-1', keyOf(1));
    cache.set('hash-1', { ...keyOf(1), name: 'renamed' });
    cache.deleteById('id-1');
    expect(cache.get('hash-1')).toBeUndefined();
    expect(indexSizeOf(cache)).toBe(0);
  });

  it('keeps no id of a key the cache dropped by itself, evicted or expired', async () => {
    const cache = new KeyCache(3, 30);
    for (let n = 0; n < 5; n++) cache.set(`hash-${n}`, keyOf(n));
    expect(cache.get('hash-0')).toBeUndefined();
    expect(indexSizeOf(cache)).toBe(3);
    await sleep(40);
    for (const n of [2, 3, 4]) expect(cache.get(`hash-${n}`)).toBeUndefined();
    expect(indexSizeOf(cache)).toBe(0);
  });
});
