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

/** A miner as its circuit knows it: a uid re-registered by another hotkey is another miner. */
export interface CircuitMiner {
  uid: number;
  hotkey: string;
}

/**
 * `open`: the miner's circuit just opened. Not open: it just closed, or a call to the miner just
 * succeeded while it was closed (on every such call: a listener writes only what changes).
 */
export type CircuitListener = (miner: CircuitMiner, open: boolean) => void;

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
 * refusals of us and our own shutdown say nothing about the miner's health. A miner is its uid
 * and hotkey: a uid re-registered by another hotkey starts closed, and the old hotkey's calls
 * still in flight count towards the old one's circuit alone (an audit's finding: keyed by uid,
 * the new miner was left out for the old one's cooldown while listed `active`).
 */
export class MinerCircuits {
  private readonly policies = new Map<string, MinerPolicies>();
  /** When each miner's circuit last opened (see isOpen). */
  private readonly openedAt = new Map<string, number>();
  /** Miners whose half-open trial a call has been admitted as, until that call ends (admit). */
  private readonly trials = new Set<string>();
  private readonly listeners: CircuitListener[] = [];
  /** When the circuits open now first opened (Date.now), for the line that says they closed. */
  private readonly openSince = new Map<string, number>();
  /** The hotkey each uid was last called as, so that its predecessor's circuit is let go. */
  private readonly hotkeys = new Map<number, string>();

  constructor(
    private readonly settings: MinerCircuitSettings,
    private readonly isMinersFault: (error: unknown) => boolean,
    private readonly lines?: CircuitLines,
  ) {}

  of(miner: CircuitMiner): MinerPolicies {
    const named = { uid: miner.uid, hotkey: miner.hotkey };
    const key = keyOf(named);
    this.forgetPredecessor(named);
    let policies = this.policies.get(key);
    if (!policies) {
      const { minerConcurrency, breakerFailures, breakerCooldownMs } = this.settings;
      const breaker = circuitBreaker(handleWhen(this.isMinersFault), {
        halfOpenAfter: breakerCooldownMs,
        breaker: new ConsecutiveBreaker(breakerFailures),
      });
      breaker.onBreak((reason) => {
        // A predecessor's call in flight, ending after its uid was called as another hotkey:
        // its state was let go (forgetPredecessor), and is not kept again.
        if (this.hotkeys.get(named.uid) !== named.hotkey) return;
        // On cockatiel's clock (Date.now), as its cooldown is.
        const now = Date.now();
        this.openedAt.set(key, now);
        // Said once per outage of the miner's, not at each failed trial (one a cooldown).
        if (!this.openSince.has(key)) {
          this.openSince.set(key, now);
          this.lines?.opened(named, 'error' in reason ? reason.error : undefined);
        }
        this.listeners.forEach((listener) => listener(named, true));
      });
      breaker.onReset(() => {
        if (this.hotkeys.get(named.uid) !== named.hotkey) return;
        const since = this.openSince.get(key);
        this.openSince.delete(key);
        if (since !== undefined) this.lines?.closed(named, Date.now() - since);
        this.listeners.forEach((listener) => listener(named, false));
      });
      // A success with the circuit closed says as much as a reset: the state recorded may be
      // another replica's circuit's, or from before a restart, which no reset here would clear.
      breaker.onSuccess(() => {
        if (breaker.state === CircuitState.Closed)
          this.listeners.forEach((listener) => listener(named, false));
      });
      policies = { bulkhead: bulkhead(minerConcurrency, minerConcurrency * 4), breaker };
      this.policies.set(key, policies);
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
  isOpen(miner: CircuitMiner): boolean {
    const key = keyOf(miner);
    const state = this.policies.get(key)?.breaker.state;
    if (state === CircuitState.HalfOpen || this.trials.has(key)) return true;
    if (state !== CircuitState.Open) return false;
    return Date.now() - (this.openedAt.get(key) ?? 0) < this.settings.breakerCooldownMs;
  }

  /**
   * Admits a call before a call of the budget is taken for it, or fails as circuit_open while
   * isOpen. The first call past the cooldown is admitted as the half-open trial, and the others
   * are refused until it ends (`release`, whatever its outcome): cockatiel would hold them until
   * the trial ended and, were it to fail, refuse them, each with a budget call taken that the
   * miner never received. A trial refused before reaching the breaker (no budget) leaves the
   * next call the trial.
   */
  admit(miner: CircuitMiner): () => void {
    if (this.isOpen(miner))
      throw new MinerCallError('circuit_open', 'circuit open after repeated failures');
    const key = keyOf(miner);
    if (this.policies.get(key)?.breaker.state !== CircuitState.Open) return () => undefined;
    this.trials.add(key);
    return () => this.trials.delete(key);
  }

  onChange(listener: CircuitListener): void {
    this.listeners.push(listener);
  }

  /**
   * Drops what is kept of the uid's previous hotkey, once the uid is called as another (at most
   * the subnet's 256 uids' worth kept). Its calls in flight keep their own policies to the end.
   */
  private forgetPredecessor(miner: CircuitMiner): void {
    const previous = this.hotkeys.get(miner.uid);
    this.hotkeys.set(miner.uid, miner.hotkey);
    if (previous === undefined || previous === miner.hotkey) return;
    const key = keyOf({ uid: miner.uid, hotkey: previous });
    this.policies.delete(key);
    this.openedAt.delete(key);
    this.openSince.delete(key);
    this.trials.delete(key);
  }
}

function keyOf(miner: CircuitMiner): string {
  return `${miner.uid} ${miner.hotkey}`;
}
