import { createRng, deriveSeed, hashUnit, WeightedPicker } from './rng';

describe('createRng', () => {
  it('repeats the same sequence for the same seed', () => {
    const first = createRng(42);
    const second = createRng(42);
    const draws = Array.from({ length: 5 }, () => [first.next(), second.next()]);
    for (const [left, right] of draws) expect(left).toBe(right);
  });

  it('stays within its ranges', () => {
    const rng = createRng(1);
    for (let index = 0; index < 1000; index++) {
      const value = rng.next();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      const integer = rng.int(3, 5);
      expect([3, 4, 5]).toContain(integer);
    }
  });
});

describe('deriveSeed', () => {
  it('gives different streams for different seeds and paths', () => {
    // Seeds whose digits differ only in the low bits once collided with a naive FNV start.
    const seeds = new Set([1, 7, 8, 17, 71].map((seed) => deriveSeed(seed, 'x')));
    expect(seeds.size).toBe(5);
    expect(deriveSeed(1, 'x')).not.toBe(deriveSeed(1, 'reddit'));
    expect(deriveSeed(1, 'miner', 12)).not.toBe(deriveSeed(1, 'miner', 1, 2));
  });

  it('is stable', () => {
    expect(deriveSeed(5, 'a', 1)).toBe(deriveSeed(5, 'a', 1));
    expect(hashUnit(5, 'a')).toBeLessThan(1);
  });
});

describe(WeightedPicker.name, () => {
  it('favours the first items of a Zipf list', () => {
    const picker = WeightedPicker.zipf(['a', 'b', 'c', 'd'], 1);
    const rng = createRng(9);
    const counts: Record<string, number> = { a: 0, b: 0, c: 0, d: 0 };
    for (let index = 0; index < 4000; index++) counts[picker.pick(rng)]++;
    expect(counts.a).toBeGreaterThan(counts.b);
    expect(counts.b).toBeGreaterThan(counts.d);
    expect(counts.d).toBeGreaterThan(0);
  });
});
