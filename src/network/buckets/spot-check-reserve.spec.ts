import { BudgetLeft } from '../transport/call-budgets';
import { SpotCheckReserve } from './spot-check-reserve';

/** Ten miners, `m0`..`m9`, with the calls left given (the rest: 1). */
function network(left: Record<string, number> = {}) {
  const hotkeys = Array.from({ length: 10 }, (_, i) => `m${i}`);
  const budgets = new Map<string, BudgetLeft>(
    hotkeys.map((hotkey) => [hotkey, { left: left[hotkey] ?? 1, nextAt: null }]),
  );
  return { hotkeys, budgets };
}

const taken = (reserve: SpotCheckReserve, hotkeys: string[]) =>
  hotkeys.filter((hotkey) => reserve.take(hotkey));

describe(SpotCheckReserve.name, () => {
  it("takes miners' last calls only while more than the reserve's share would keep one", () => {
    const { hotkeys, budgets } = network();
    expect(taken(new SpotCheckReserve(budgets, hotkeys, 0.5), hotkeys)).toEqual([
      'm0',
      'm1',
      'm2',
      'm3',
      'm4',
    ]);
    expect(taken(new SpotCheckReserve(budgets, hotkeys, 0), hotkeys)).toEqual(hotkeys);
    expect(taken(new SpotCheckReserve(budgets, hotkeys, 1), hotkeys)).toEqual([]);
    // Rounded up: 0.25 of 10 keeps 3.
    expect(taken(new SpotCheckReserve(budgets, hotkeys, 0.25), hotkeys)).toHaveLength(7);
  });

  it('counts the miners that have spent their call as already taken', () => {
    const { hotkeys, budgets } = network({ m0: 0, m1: 0, m2: 0, m3: 0 });
    expect(taken(new SpotCheckReserve(budgets, hotkeys, 0.5), hotkeys)).toEqual(['m4']);
  });

  it('always takes a call that is not the last, and never one of a spent miner', () => {
    const { hotkeys, budgets } = network({ m0: 0, m1: 2, m2: 0, m3: 0, m4: 0, m5: 0 });
    budgets.set('m9', { left: Infinity, nextAt: null });
    const reserve = new SpotCheckReserve(budgets, hotkeys, 0.5);
    expect(taken(reserve, ['m0', 'm1', 'm6', 'm9', 'm1', 'm9'])).toEqual(['m1', 'm9', 'm1', 'm9']);
  });
});
