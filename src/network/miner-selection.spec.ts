import { createRng } from '../devnet/rng';
import { MAX_PER_COLDKEY, rankMinersForQuery, SelectableMiner } from './miner-selection';

function miner(uid: number, overrides: Partial<SelectableMiner> = {}): SelectableMiner {
  return { uid, coldkey: `coldkey-${uid}`, credibility: 0.5, incentive: 0.1, ...overrides };
}

/** How often each uid comes first over `draws` seeded rankings. */
function firstPlaceCounts(miners: readonly SelectableMiner[], draws: number, seed = 1) {
  const rng = createRng(seed);
  const counts = new Map<number, number>();
  for (let draw = 0; draw < draws; draw++) {
    const [first] = rankMinersForQuery(miners, () => rng.next());
    counts.set(first.uid, (counts.get(first.uid) ?? 0) + 1);
  }
  return counts;
}

describe(rankMinersForQuery.name, () => {
  it('returns nothing for no miners', () => {
    expect(rankMinersForQuery([])).toEqual([]);
  });

  it('ranks every miner exactly once when no coldkey is shared', () => {
    const miners = Array.from({ length: 20 }, (_, index) => miner(index));
    const rng = createRng(5);

    for (let draw = 0; draw < 50; draw++) {
      const ranked = rankMinersForQuery(miners, () => rng.next());
      expect(ranked).toHaveLength(miners.length);
      expect(new Set(ranked)).toEqual(new Set(miners));
    }
  });

  it('ranks at most two miners of the same coldkey', () => {
    const miners = [
      ...Array.from({ length: 5 }, (_, index) => miner(index, { coldkey: 'operator-a' })),
      ...Array.from({ length: 3 }, (_, index) => miner(10 + index, { coldkey: 'operator-b' })),
      miner(20, { coldkey: 'operator-c' }),
    ];
    const rng = createRng(9);

    for (let draw = 0; draw < 200; draw++) {
      const ranked = rankMinersForQuery(miners, () => rng.next());
      const perColdkey = new Map<string, number>();
      for (const { coldkey } of ranked) perColdkey.set(coldkey, (perColdkey.get(coldkey) ?? 0) + 1);
      expect(MAX_PER_COLDKEY).toBe(2);
      expect(Object.fromEntries(perColdkey)).toEqual({
        'operator-a': 2,
        'operator-b': 2,
        'operator-c': 1,
      });
      expect(new Set(ranked.map((entry) => entry.uid)).size).toBe(ranked.length);
    }
  });

  it('skips further miners of a coldkey but still ranks other operators after them', () => {
    const miners = [
      miner(1, { coldkey: 'operator-a' }),
      miner(2, { coldkey: 'operator-a' }),
      miner(3, { coldkey: 'operator-a' }),
      miner(4, { coldkey: 'operator-b' }),
    ];

    const alwaysFirst = rankMinersForQuery(miners, () => 0);

    expect(alwaysFirst.map((entry) => entry.uid)).toEqual([1, 2, 4]);
  });

  it('returns the miners themselves, not copies', () => {
    const miners = [miner(1), miner(2)];

    const ranked = rankMinersForQuery(miners, () => 0.5);

    expect(ranked.every((entry) => miners.includes(entry))).toBe(true);
  });

  it('puts miners first in proportion to credibility times incentive', () => {
    const strong = miner(1, { credibility: 0.9, incentive: 0.29 });
    const weak = miner(2, { credibility: 0.3, incentive: 0.29 });

    const counts = firstPlaceCounts([weak, strong], 4_000);

    const strongShare = (counts.get(1) ?? 0) / 4_000;
    expect(strongShare).toBeGreaterThan(0.72);
    expect(strongShare).toBeLessThan(0.78);
  });

  it('favours incentive as much as credibility', () => {
    const rewarded = miner(1, { credibility: 0.5, incentive: 0.59 });
    const unrewarded = miner(2, { credibility: 0.5, incentive: 0.19 });

    const counts = firstPlaceCounts([unrewarded, rewarded], 4_000, 3);

    expect((counts.get(1) ?? 0) / 4_000).toBeGreaterThan(0.7);
  });

  it('still puts a zero-credibility miner first now and then', () => {
    const distrusted = miner(1, { credibility: 0, incentive: 0.5 });
    const trusted = miner(2, { credibility: 1, incentive: 0.5 });

    const counts = firstPlaceCounts([distrusted, trusted], 5_000, 11);

    expect(counts.get(1) ?? 0).toBeGreaterThan(10);
    expect(counts.get(1) ?? 0).toBeLessThan(150);
  });

  it('still puts a miner without incentive first now and then', () => {
    const newcomer = miner(1, { credibility: 1, incentive: 0 });
    const established = miner(2, { credibility: 1, incentive: 0.5 });

    const counts = firstPlaceCounts([newcomer, established], 5_000, 17);

    expect(counts.get(1) ?? 0).toBeGreaterThan(10);
    expect(counts.get(1) ?? 0).toBeLessThan(200);
  });

  // Neither comes from the chain or the store today (incentives are u16 shares, credibility a
  // running mean of scores in 0..1): the clamps keep a bad value from taking the whole draw.
  it('counts a credibility above 1 as 1, and an incentive below 0 as none', () => {
    const pairs = [
      [miner(1, { credibility: 5 }), miner(2, { credibility: 1 })],
      [miner(1, { credibility: 1, incentive: -1 }), miner(2, { credibility: 1, incentive: 0 })],
    ];
    const firstAt = (miners: SelectableMiner[], point: number) =>
      rankMinersForQuery(miners, () => point)[0].uid;

    // Each pair weighs alike, so each of its miners takes half the draw.
    for (const pair of pairs) expect([firstAt(pair, 0.25), firstAt(pair, 0.75)]).toEqual([1, 2]);
  });

  it('is deterministic for a given random source', () => {
    const miners = Array.from({ length: 12 }, (_, index) =>
      miner(index, { credibility: (index + 1) / 12, coldkey: `operator-${index % 5}` }),
    );
    const first = createRng(21);
    const second = createRng(21);

    expect(rankMinersForQuery(miners, () => first.next())).toEqual(
      rankMinersForQuery(miners, () => second.next()),
    );
  });
});
