/**
 * A tiny seeded PRNG (mulberry32) and seed derivation. Everything random in the devnet goes
 * through here so that a seed fully determines the corpus, the keys and the faults.
 */

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with probability `probability`. */
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: (items) => {
      if (items.length === 0) throw new Error('cannot pick from an empty list');
      return items[Math.floor(next() * items.length)];
    },
  };
}

/**
 * A 32-bit seed from a base seed and a path of names or numbers, so that independent streams
 * (one per miner, one for keys, ...) do not shift when another stream draws more numbers.
 */
export function deriveSeed(seed: number, ...parts: ReadonlyArray<string | number>): number {
  // FNV-1a over the textual path (seed included), then one mulberry32 step to spread the bits.
  let hash = 0x811c9dc5;
  for (const character of `${seed}|${parts.join('|')}`) {
    hash ^= character.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return Math.floor(createRng(hash >>> 0).next() * 4_294_967_296);
}

/**
 * A stateless uniform number in [0, 1) for a path, for per-item decisions that must not depend on
 * order.
 */
export function hashUnit(seed: number, ...parts: ReadonlyArray<string | number>): number {
  return deriveSeed(seed, ...parts) / 4_294_967_296;
}

/** Picks an index with probability proportional to its weight, given cumulative weights. */
export class WeightedPicker<T> {
  private readonly cumulative: number[] = [];

  constructor(
    private readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length) {
      throw new Error('weighted picker needs one weight per item and at least one item');
    }
    let total = 0;
    for (const weight of weights) {
      total += weight;
      this.cumulative.push(total);
    }
  }

  /** Weights falling as 1 / rank^exponent: a few very popular items and a long tail. */
  static zipf<T>(items: readonly T[], exponent = 1): WeightedPicker<T> {
    return new WeightedPicker(
      items,
      items.map((_, rank) => 1 / Math.pow(rank + 1, exponent)),
    );
  }

  pick(rng: Rng): T {
    const target = rng.next() * this.cumulative[this.cumulative.length - 1];
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.cumulative[middle] > target) high = middle;
      else low = middle + 1;
    }
    return this.items[low];
  }
}
