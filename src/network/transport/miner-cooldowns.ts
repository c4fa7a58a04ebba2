/**
 * Synapses a miner should not be asked for a while, and what was logged about it when: the
 * memory behind "a miner that answered 404 to OnDemandRequest is not asked again for an hour"
 * and "a blacklisted miner is logged once an hour". Per process: each replica learns it with
 * one call.
 */
export class MinerCooldowns<Reason extends string> {
  private readonly until = new Map<string, { reason: Reason; until: number }>();
  private readonly logged = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  start(hotkey: string, synapse: string, reason: Reason, ms: number): void {
    this.until.set(`${hotkey}|${synapse}`, { reason, until: this.now() + ms });
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
    const last = this.logged.get(key);
    if (last !== undefined && this.now() - last < everyMs) return false;
    this.logged.set(key, this.now());
    return true;
  }
}
