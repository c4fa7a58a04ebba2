/** Cooldowns held before lapsed ones are first swept. */
const SWEEP_FROM = 1024;

/**
 * Synapses a miner should not be asked for a while, and what was logged about it when: the
 * memory behind "a miner that answered 404 to OnDemandRequest is not asked again for an hour"
 * and "a blacklisted miner is logged once an hour". Per process: each replica learns it with
 * one call.
 */
export class MinerCooldowns<Reason extends string> {
  private readonly until = new Map<string, { reason: Reason; until: number }>();
  /** Until when each log key stays quiet (`shouldLog`). */
  private readonly quietUntil = new Map<string, number>();
  /** Cooldowns held when lapsed ones are next dropped (see start). */
  private sweepAt = SWEEP_FROM;
  /** The same for the quiet log keys: a miner's key stayed for good once it left the subnet. */
  private quietSweepAt = SWEEP_FROM;

  constructor(private readonly now: () => number) {}

  /** `synapse`: what the miner is not asked, a synapse or anything finer (a bucket of it). */
  start(hotkey: string, synapse: string, reason: Reason, ms: number): void {
    this.until.set(`${hotkey}|${synapse}`, { reason, until: this.now() + ms });
    // A lapsed cooldown is dropped when looked up; one never looked up again (a bucket no
    // query asks for since) would stay for good. Dropped here once their number has doubled.
    if (this.until.size < this.sweepAt) return;
    dropLapsed(this.until, (entry) => entry.until, this.now());
    this.sweepAt = Math.max(SWEEP_FROM, 2 * this.until.size);
  }

  /** Why the synapse may not be asked of this miner now, or undefined. */
  active(hotkey: string, synapse: string): Reason | undefined {
    const key = `${hotkey}|${synapse}`;
    const entry = this.until.get(key);
    if (!entry) return undefined;
    if (entry.until > this.now()) return entry.reason;
    this.until.delete(key);
    return undefined;
  }

  /** True at most once per `everyMs` for `key`: for logs that would otherwise repeat. */
  shouldLog(key: string, everyMs: number): boolean {
    const quiet = this.quietUntil.get(key);
    if (quiet !== undefined && quiet > this.now()) return false;
    this.quietUntil.set(key, this.now() + everyMs);
    if (this.quietUntil.size >= this.quietSweepAt) {
      dropLapsed(this.quietUntil, (until) => until, this.now());
      this.quietSweepAt = Math.max(SWEEP_FROM, 2 * this.quietUntil.size);
    }
    return true;
  }
}

/** Drops the entries whose time has come: each would be answered as if it were not held. */
function dropLapsed<Entry>(held: Map<string, Entry>, until: (entry: Entry) => number, now: number) {
  for (const [key, entry] of held) if (until(entry) <= now) held.delete(key);
}
