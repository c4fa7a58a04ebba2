/** What selection needs to know about a miner. */
export interface SelectableMiner {
  uid: number;
  coldkey: string;
  credibility: number;
  incentive: number;
}

export const MAX_PER_COLDKEY = 2;

/**
 * Orders miners for a query: a weighted random draw without replacement, weight =
 * credibility × (incentive + ε) so that new or low-incentive miners still get some traffic,
 * skipping a miner once MAX_PER_COLDKEY of its coldkey were drawn (one operator cannot fill a
 * quorum). The first `count` are queried; the rest, in order, are the spares for hedging.
 */
export function rankMinersForQuery<T extends SelectableMiner>(
  miners: readonly T[],
  random: () => number = Math.random,
): T[] {
  const pool = [...miners];
  const ranked: T[] = [];
  const perColdkey = new Map<string, number>();
  while (pool.length > 0) {
    const eligible = pool.filter((miner) => (perColdkey.get(miner.coldkey) ?? 0) < MAX_PER_COLDKEY);
    if (eligible.length === 0) break;
    const chosen = weightedPick(eligible, random);
    ranked.push(chosen);
    pool.splice(pool.indexOf(chosen), 1);
    perColdkey.set(chosen.coldkey, (perColdkey.get(chosen.coldkey) ?? 0) + 1);
  }
  return ranked;
}

function weightedPick<T extends SelectableMiner>(miners: readonly T[], random: () => number): T {
  const weights = miners.map(weightOf);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let point = random() * total;
  for (let index = 0; index < miners.length; index++) {
    point -= weights[index];
    if (point <= 0) return miners[index];
  }
  return miners[miners.length - 1];
}

function weightOf(miner: SelectableMiner): number {
  const credibility = Math.max(0.01, Math.min(1, miner.credibility));
  return credibility * (Math.max(0, miner.incentive) + 0.01);
}
