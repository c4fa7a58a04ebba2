import { SynapseName } from '../common/synapse-names';

/** Calls per validator hotkey per window (the subnet's limits 1, 1 and 5, doubled for restarts). */
export const CALL_LIMITS: Readonly<Partial<Record<SynapseName, number>>> = {
  GetMinerIndex: 2,
  GetDataEntityBucket: 2,
  GetContentsByBuckets: 10,
};
/** The limits' windows are fixed: all counters reset together every hour from the miner's start. */
export const CALL_WINDOW_MS = 60 * 60_000;

/**
 * A subnet 13 miner's call limits per validator hotkey, as its code keeps them: fixed 60-minute
 * windows one after the other from the miner's start (a quiet miner does not start a window at
 * its next call), every counter reset together, a call counted before it is judged (refused
 * calls count too).
 */
export class CallLimits {
  private counts = new Map<string, number>();
  private windowStart: number;

  constructor(private readonly started: number) {
    this.windowStart = started;
  }

  /** Counts the call; true when it is over the limit of its synapse (403). */
  overLimit(caller: string, synapse: SynapseName, now: number): boolean {
    const limit = CALL_LIMITS[synapse];
    if (limit === undefined) return false;
    if (now - this.windowStart >= CALL_WINDOW_MS) {
      this.counts = new Map();
      this.windowStart =
        this.started + Math.floor((now - this.started) / CALL_WINDOW_MS) * CALL_WINDOW_MS;
    }
    const key = `${caller}|${synapse}`;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count > limit;
  }
}
