import { lruCache } from './lru-cache';

/** What the JavaScript heap and array buffers hold now (typed arrays live outside the heap). */
function allocated(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

describe('lruCache', () => {
  it('keeps the most recently used entries, up to its bound', () => {
    const cache = lruCache<string, number>(3);
    cache.set('a', 1).set('b', 2).set('c', 3);
    cache.get('a');
    cache.set('d', 4);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
    cache.set('d', 5);
    expect(cache.size).toBe(3);
  });

  it('passes its other options on', () => {
    const disposed: string[] = [];
    const cache = lruCache<string, number>(1, { dispose: (_value, key) => disposed.push(key) });
    cache.set('a', 1).set('b', 2);
    expect(disposed).toEqual(['a']);
  });

  it('allocates nothing ahead of what it holds', () => {
    // lru-cache's `max: 100_000` took 5.2 MB here (with the `ttl`), whatever it held. A
    // collection between the two readings could only make the difference smaller; what can make
    // it larger is the first use of lru-cache's code (compiled and feedback on first call: 266 KB
    // once on Node 24 in CI), so a first cache is built before measuring, and the bound leaves
    // room for the runtime's noise while staying a fifth of what `max` took.
    lruCache<string, number>(10, { ttl: 60_000 }).set('warm', 1);
    const before = allocated();
    const cache = lruCache<string, number>(100_000, { ttl: 60_000 });
    cache.set('a', 1);
    expect(allocated() - before).toBeLessThan(1024 * 1024);
  });
});
