import { SynapseName } from '../common/synapse-names';

/** Calls per validator hotkey per window (the subnet's limits 1, 1 and 5, doubled for restarts). */
export const CALL_LIMITS: Readonly<Partial<Record<SynapseName, number>>> = {
  GetMinerIndex: 2,
  GetDataEntityBucket: 2,
  GetContentsByBuckets: 10,
};
/** How old the last clearing of the counters must be for a call to clear them again. */
export const CALL_WINDOW_MS = 60 * 60_000;

/**
 * A subnet 13 miner's call limits per validator hotkey, as its code keeps them
 * (neurons/miner.py default_blacklist): one set of counters from the miner's start, cleared all
 * together by the first call from a validator that arrives 60 minutes or more after the last
 * clearing, which then starts the next window (a quiet miner's window lasts until its next
 * call); a call counted before it is judged (refused calls count too).
 */
export class CallLimits {
  private counts = new Map<string, number>();
  private windowStart: number;

  constructor(started: number) {
    this.windowStart = started;
  }

  /** Counts the call; true when it is over the limit of its synapse (403). */
  overLimit(caller: string, synapse: SynapseName, now: number): boolean {
    if (now - this.windowStart >= CALL_WINDOW_MS) {
      this.counts = new Map();
      this.windowStart = now;
    }
    const limit = CALL_LIMITS[synapse];
    if (limit === undefined) return false;
    const key = `${caller}|${synapse}`;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count > limit;
  }
}
