import { BudgetLeft } from '../transport/call-budgets';

/**
 * Which miners' GetDataEntityBucket calls users' query_bucket may take, leaving the index spot
 * checks a share of the network to choose from (INDEX_SPOT_CHECK_RESERVE). Beside a validator a
 * miner allows the gateway one such call an hour, and a spot check can only pick a miner that
 * still has it: were users free to take them all, a key's hundred requests an hour would leave
 * no miner to check. So a call that is not the miner's last is always free to take, and a last
 * one only while more than the reserve's share of the miners that can be asked (rounded up)
 * would still have one after it.
 */
export class SpotCheckReserve {
  private lastCallsLeft: number;

  /**
   * `left`: what each miner has left of its GetDataEntityBucket budget, for every hotkey in
   * `network` (the miners that can be asked it).
   */
  constructor(
    private readonly left: ReadonlyMap<string, BudgetLeft>,
    network: readonly string[],
    reserve: number,
  ) {
    const withCall = network.filter((hotkey) => (left.get(hotkey)?.left ?? 0) > 0).length;
    this.lastCallsLeft = Math.max(0, withCall - Math.ceil(network.length * reserve));
  }

  /** Whether users may take the miner's next call now; if so, it is counted as taken. */
  take(hotkey: string): boolean {
    const left = this.left.get(hotkey)?.left ?? 0;
    if (left >= 2) return true;
    if (left < 1 || this.lastCallsLeft === 0) return false;
    this.lastCallsLeft -= 1;
    return true;
  }
}
