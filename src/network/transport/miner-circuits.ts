import {
  BulkheadPolicy,
  bulkhead,
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  handleWhen,
} from 'cockatiel';
import { MinerCallError } from './miner-failures';

export interface MinerPolicies {
  /** Bounded concurrency towards the miner, with a queue of four times as many calls. */
  bulkhead: BulkheadPolicy;
  /** Opened by consecutive faults of the miner's. */
  breaker: CircuitBreakerPolicy;
}

export interface MinerCircuitSettings {
  minerConcurrency: number;
  breakerFailures: number;
  breakerCooldownMs: number;
}

/**
 * `open`: the miner's circuit just opened. Not open: it just closed, or a call to the miner just
 * succeeded while it was closed (on every such call: a listener writes only what changes).
 */
export type CircuitListener = (uid: number, open: boolean) => void;

/** What the log says of a miner's circuit (MinerClient's lines). */
export interface CircuitLines {
  /** Its circuit opened, from closed (not again after a failed trial); `error`: the last fault. */
  opened(miner: { uid: number; hotkey: string }, error: unknown): void;
  /** It closed again (a trial call answered), `openMs` after it first opened. */
  closed(miner: { uid: number; hotkey: string }, openMs: number): void;
}

/**
 * Each miner's bulkhead and circuit breaker (cockatiel's), made on its first call. Only failures
 * `isMinersFault` accepts count towards opening a circuit: our own refusals, the miner's
 * refusals of us and our own shutdown say nothing about the miner's health.
 */
export class MinerCircuits {
  private readonly policies = new Map<number, MinerPolicies>();
  /** When each miner's circuit last opened (see isOpen). */
  private readonly openedAt = new Map<number, number>();
  /** Miners whose half-open trial a call has been admitted as, until that call ends (admit). */
  private readonly trials = new Set<number>();
  private readonly listeners: CircuitListener[] = [];
  /** The hotkey each uid was last called as: the log's lines name both. */
  private readonly hotkeys = new Map<number, string>();
  /** When the circuits open now first opened (Date.now), for the line that says they closed. */
  private readonly openSince = new Map<number, number>();

  constructor(
    private readonly settings: MinerCircuitSettings,
    private readonly isMinersFault: (error: unknown) => boolean,
    private readonly lines?: CircuitLines,
  ) {}

  of(miner: { uid: number; hotkey: string }): MinerPolicies {
    const { uid } = miner;
    this.hotkeys.set(uid, miner.hotkey);
    let policies = this.policies.get(uid);
    if (!policies) {
      const { minerConcurrency, breakerFailures, breakerCooldownMs } = this.settings;
      const breaker = circuitBreaker(handleWhen(this.isMinersFault), {
        halfOpenAfter: breakerCooldownMs,
        breaker: new ConsecutiveBreaker(breakerFailures),
      });
      breaker.onBreak((reason) => {
        // On cockatiel's clock (Date.now), as its cooldown is.
        const now = Date.now();
        this.openedAt.set(uid, now);
        // Said once per outage of the miner's, not at each failed trial (one a cooldown).
        if (!this.openSince.has(uid)) {
          this.openSince.set(uid, now);
          this.lines?.opened(this.named(uid), 'error' in reason ? reason.error : undefined);
        }
        this.listeners.forEach((listener) => listener(uid, true));
      });
      breaker.onReset(() => {
        const since = this.openSince.get(uid);
        this.openSince.delete(uid);
        if (since !== undefined) this.lines?.closed(this.named(uid), Date.now() - since);
        this.listeners.forEach((listener) => listener(uid, false));
      });
      // A success with the circuit closed says as much as a reset: the state recorded may be
      // another replica's circuit's, or from before a restart, which no reset here would clear.
      breaker.onSuccess(() => {
        if (breaker.state === CircuitState.Closed)
          this.listeners.forEach((listener) => listener(uid, false));
      });
      policies = { bulkhead: bulkhead(minerConcurrency, minerConcurrency * 4), breaker };
      this.policies.set(uid, policies);
    }
    return policies;
  }

  /**
   * True while the miner's circuit is open and its cooldown lasts (it failed repeatedly and is
   * being left alone), and while a call is its half-open trial. Once the cooldown is over the
   * breaker stays `Open` until a call tries the miner (cockatiel half-opens on the next call):
   * callers that asked the breaker's state and skipped the miner never called it again, and the
   * miner was left out until a restart; a trial ends with its call (a timeout at most). On the
   * wall clock, as cockatiel's cooldown is: a clock set back keeps the circuit open as much
   * longer, which cockatiel would enforce anyway, and saying so here spares the budget calls its
   * refusals would take (docs/decisions.md, "Clocks").
   */
  isOpen(uid: number): boolean {
    const state = this.policies.get(uid)?.breaker.state;
    if (state === CircuitState.HalfOpen || this.trials.has(uid)) return true;
    if (state !== CircuitState.Open) return false;
    return Date.now() - (this.openedAt.get(uid) ?? 0) < this.settings.breakerCooldownMs;
  }

  /**
   * Admits a call before a call of the budget is taken for it, or fails as circuit_open while
   * isOpen. The first call past the cooldown is admitted as the half-open trial, and the others
   * are refused until it ends (`release`, whatever its outcome): cockatiel would hold them until
   * the trial ended and, were it to fail, refuse them, each with a budget call taken that the
   * miner never received. A trial refused before reaching the breaker (no budget) leaves the
   * next call the trial.
   */
  admit(uid: number): () => void {
    if (this.isOpen(uid))
      throw new MinerCallError('circuit_open', 'circuit open after repeated failures');
    if (this.policies.get(uid)?.breaker.state !== CircuitState.Open) return () => undefined;
    this.trials.add(uid);
    return () => this.trials.delete(uid);
  }

  onChange(listener: CircuitListener): void {
    this.listeners.push(listener);
  }

  private named(uid: number): { uid: number; hotkey: string } {
    return { uid, hotkey: this.hotkeys.get(uid) ?? '' };
  }
}
