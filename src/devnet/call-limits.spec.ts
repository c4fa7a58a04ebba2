import { SynapseName } from '../common/synapse-names';
import { CALL_WINDOW_MS, CallLimits } from './call-limits';

/**
 * The counters as a subnet 13 miner keeps them (neurons/miner.py `default_blacklist`): cleared
 * all together by the first validator call at least 60 minutes after the last clearing
 * (`>= MIN_EVALUATION_PERIOD`), whatever that call's synapse.
 */

/** The miner's start on its clock (ms): well past the epoch, as a real clock is. */
const START = 1_800_000_000_000;

/** Calls `synapse` `count` times at `at` and says which were over the limit. */
function calls(limits: CallLimits, synapse: SynapseName, count: number, at: number): boolean[] {
  return Array.from({ length: count }, () => limits.overLimit('validator', synapse, at));
}

describe(CallLimits.name, () => {
  it('clears the counters at exactly 60 minutes after the last clearing, not later', () => {
    const limits = new CallLimits(START);
    expect(calls(limits, 'GetMinerIndex', 3, START)).toEqual([false, false, true]);
    expect(calls(limits, 'GetMinerIndex', 1, START + CALL_WINDOW_MS - 1)).toEqual([true]);
    expect(calls(limits, 'GetMinerIndex', 3, START + CALL_WINDOW_MS)).toEqual([false, false, true]);
  });

  it('counts the window from the miner start, not from the first call', () => {
    const limits = new CallLimits(START);
    const firstCall = START + 30 * 60_000;
    expect(calls(limits, 'GetMinerIndex', 3, firstCall)).toEqual([false, false, true]);
    // An hour after the start, half an hour after the first call: a new window.
    expect(calls(limits, 'GetMinerIndex', 1, START + CALL_WINDOW_MS)).toEqual([false]);
  });

  it('clears them at a call of a synapse it does not limit, as the miner clears before counting', () => {
    const limits = new CallLimits(START);
    expect(calls(limits, 'GetMinerIndex', 3, START)).toEqual([false, false, true]);
    expect(limits.overLimit('validator', 'OnDemandRequest', START + CALL_WINDOW_MS)).toBe(false);
    const later = START + CALL_WINDOW_MS + 60_000;
    expect(calls(limits, 'GetMinerIndex', 3, later)).toEqual([false, false, true]);
    // The on-demand call started the window: an hour after it, not after `later`, it ends.
    expect(calls(limits, 'GetMinerIndex', 1, START + 2 * CALL_WINDOW_MS)).toEqual([false]);
  });
});
