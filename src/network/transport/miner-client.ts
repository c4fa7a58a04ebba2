import { setMaxListeners } from 'node:events';
import { isIP } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import {
  BulkheadPolicy,
  bulkhead,
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  handleWhen,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import { Agent, Dispatcher, request } from 'undici';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { AxonTarget, buildSignedRequest, newTerminal } from '../bittensor/dendrite';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { SynapseName } from '../../common/synapse-names';
import { AddressPolicy, AddressRefusedError } from './address-policy';
import { CallBudgets, CallPurpose } from './call-budgets';
import { MinerCooldowns } from './miner-cooldowns';
import {
  classify,
  KeptForChecksError,
  MinerCallError,
  MinerFailureReason,
  NOT_CALLED,
  NOT_THE_MINERS_FAULT,
} from './miner-failures';

export interface MinerTarget {
  uid: number;
  hotkey: string;
  /** `http://host:port` as the metagraph lists it. */
  axonUrl: string;
}

/** A call's target from the metagraph's entry of a miner (its other fields left behind). */
export function targetOf(miner: MinerTarget): MinerTarget {
  return { uid: miner.uid, hotkey: miner.hotkey, axonUrl: miner.axonUrl };
}

/** What a call abandoned by our shutdown surfaces as before it is called `shutdown`. */
const ABANDONED_AS: ReadonlySet<MinerFailureReason> = new Set(['timeout', 'network']);

export interface MinerReply {
  body: unknown;
  latencyMs: number;
}

type Refusal = 'not_served' | 'blacklisted' | 'unauthorized';

/** How long a miner that answered a synapse with 404 is not asked it again. */
export const NOT_SERVED_COOLDOWN_MS = 60 * 60_000;

/**
 * How long a synapse is not asked of a miner after it refused it: a 404 means the miner does
 * not serve it (public subnet 13 miners dropped OnDemandRequest); a 403 that its blacklist or
 * its limit for our hotkey refuses us; a 401 that it could not verify us (our clock, or our
 * hotkey missing from its metagraph). A 403 to a synapse with a call budget spends the budget
 * instead (CallBudgets.spend: for every replica, until the miner's window has reset); the
 * cooldown is for a 403 to a synapse without one, where there is nothing to spend.
 */
const COOLDOWN_MS: Record<Refusal, number> = {
  not_served: NOT_SERVED_COOLDOWN_MS,
  blacklisted: 15 * 60_000,
  unauthorized: 5 * 60_000,
};
const STATUS_REFUSALS: Readonly<Record<number, Refusal>> = {
  404: 'not_served',
  403: 'blacklisted',
  401: 'unauthorized',
};
const LOG_EVERY_MS = 60 * 60_000;
/** Error bodies are read for their message only. */
const ERROR_BODY_BYTES = 4096;

interface MinerPolicies {
  bulkhead: BulkheadPolicy;
  breaker: CircuitBreakerPolicy;
}

type CircuitListener = (uid: number, open: boolean) => void;
type RefusedListener = (uid: number) => void;

/**
 * Calls miners the way a Bittensor validator's dendrite does: each call signed with the
 * validator's hotkey (dendrite.ts), sent only to allowed addresses (address-policy.ts), within
 * the miner's call budget (call-budgets.ts). Per miner: bounded concurrency (a bulkhead), a
 * circuit breaker opened by consecutive faults, and per call a timeout and a cap on the
 * response size, all from cockatiel. The answer is returned unchecked: it is untrusted.
 */
@Injectable()
export class MinerClient implements OnModuleDestroy {
  private readonly logger = new Logger(MinerClient.name);
  private readonly policies = new Map<number, MinerPolicies>();
  /** When each miner's circuit last opened (see isCircuitOpen). */
  private readonly circuitOpenedAt = new Map<number, number>();
  private readonly circuitListeners: CircuitListener[] = [];
  private readonly refusedListeners: RefusedListener[] = [];
  /** Aborted at shutdown: calls in flight end at once instead of at their timeout. */
  private readonly shutdown = new AbortController();
  private readonly addresses: AddressPolicy;
  private readonly agent: Dispatcher;
  private readonly cooldowns: MinerCooldowns<Refusal>;

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly identity: ValidatorIdentity,
    private readonly budgets: CallBudgets,
    private readonly clock: Clock,
  ) {
    // Every call in flight listens on this signal; many concurrent calls are normal, not a leak.
    setMaxListeners(0, this.shutdown.signal);
    this.addresses = new AddressPolicy(config.network.allowedNetworks);
    this.agent = new Agent({ connect: this.addresses.connector(10_000) });
    this.cooldowns = new MinerCooldowns(() => clock.now().getTime());
  }

  /**
   * Calls `synapse` on the miner with the synapse's own `fields`. `signal` lets the caller give
   * up early (a query's stragglers); that counts as a timeout. `purpose`: whose call it is,
   * which reserves of the budget it must leave (CallBudgets: a task's leaves users theirs,
   * users' and tasks' leave the spot checks theirs).
   */
  async call(
    miner: MinerTarget,
    synapse: SynapseName,
    fields: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    purpose: CallPurpose = 'user',
  ): Promise<MinerReply> {
    const started = performance.now();
    try {
      const refused = this.cooldowns.active(miner.hotkey, synapse);
      if (refused) throw new MinerCallError(refused, `${synapse} refused recently (${refused})`);
      const axon = axonOf(miner);
      const { bulkhead: limiter, breaker } = this.policiesFor(miner.uid);
      const guarded = wrap(breaker, timeout(timeoutMs, TimeoutStrategy.Aggressive));
      // The budget is taken outside the breaker: in cockatiel's half-open trial any outcome it
      // does not count as a failure closes the circuit, so a call we refused ourselves (no
      // budget, a refused address) would close a dead miner's circuit without calling it.
      const body = await limiter.execute(
        async (context) => {
          this.refuseOpenCircuit(miner.uid);
          await this.takeBudget(miner, axon, synapse, purpose);
          return guarded.execute(
            (inner) => this.send(miner, axon, synapse, fields, timeoutMs, inner.signal),
            context.signal,
          );
        },
        signal ? AbortSignal.any([this.shutdown.signal, signal]) : this.shutdown.signal,
      );
      const latencyMs = performance.now() - started;
      this.metrics.observeMinerCall(miner.uid, synapse, latencyMs / 1000);
      return { body, latencyMs };
    } catch (error) {
      const failure = this.failureOf(error, timeoutMs);
      const seconds = NOT_CALLED.has(failure.reason)
        ? undefined
        : (performance.now() - started) / 1000;
      this.metrics.observeMinerCall(miner.uid, synapse, seconds, failure.reason);
      if (failure.reason === 'address_refused')
        this.refusedListeners.forEach((listener) => listener(miner.uid));
      throw failure;
    }
  }

  /**
   * What a failed call says, as the caller and the circuit see it. Once our shutdown aborted the
   * call (or refused it once begun), however the abort surfaced it is `shutdown`: no news of the
   * miner, whose credibility the background jobs would otherwise cut.
   */
  private failureOf(error: unknown, timeoutMs: number): MinerCallError {
    const classified = classify(error, timeoutMs);
    return this.shutdown.signal.aborted && ABANDONED_AS.has(classified.reason)
      ? new MinerCallError('shutdown', 'abandoned: this gateway is shutting down')
      : classified;
  }

  onModuleDestroy(): void {
    this.shutdown.abort();
    void this.agent.destroy().catch(() => undefined);
  }

  /** False while the miner is in a cooldown for this synapse (it refused it recently). */
  mayAsk(hotkey: string, synapse: SynapseName): boolean {
    return this.cooldowns.active(hotkey, synapse) === undefined;
  }

  /** Why the miner is in a cooldown for this synapse (`not_served`: 404, …), if it is. */
  refusalOf(hotkey: string, synapse: SynapseName): MinerFailureReason | undefined {
    return this.cooldowns.active(hotkey, synapse);
  }

  /** True when `host` (an axon's) resolves only to addresses MINER_ALLOWED_NETWORKS allows. */
  permitsHost(host: string): Promise<boolean> {
    return this.addresses.permits(host);
  }

  /**
   * True while the miner's circuit is open and its cooldown lasts (it failed repeatedly and is
   * being left alone). Once the cooldown is over the breaker stays `Open` until a call tries the
   * miner (cockatiel half-opens on the next call): callers that asked the breaker's state and
   * skipped the miner never called it again, and the miner was left out until a restart.
   */
  isCircuitOpen(uid: number): boolean {
    if (this.policies.get(uid)?.breaker.state !== CircuitState.Open) return false;
    return (
      Date.now() - (this.circuitOpenedAt.get(uid) ?? 0) < this.config.network.breakerCooldownMs
    );
  }

  onCircuitChange(listener: CircuitListener): void {
    this.circuitListeners.push(listener);
  }

  /** Called when a miner's address turned out to be outside MINER_ALLOWED_NETWORKS. */
  onAddressRefused(listener: RefusedListener): void {
    this.refusedListeners.push(listener);
  }

  private policiesFor(uid: number): MinerPolicies {
    let policies = this.policies.get(uid);
    if (!policies) {
      const { minerConcurrency, breakerFailures, breakerCooldownMs } = this.config.network;
      // Our own refusals (`busy` among them), the miner's refusals of us and our own shutdown
      // say nothing about the miner's health.
      const breaker = circuitBreaker(
        handleWhen((error) => !NOT_THE_MINERS_FAULT.has(this.failureOf(error, 0).reason)),
        { halfOpenAfter: breakerCooldownMs, breaker: new ConsecutiveBreaker(breakerFailures) },
      );
      breaker.onBreak(() => {
        // On cockatiel's clock (Date.now), as its cooldown is.
        this.circuitOpenedAt.set(uid, Date.now());
        this.circuitListeners.forEach((listener) => listener(uid, true));
      });
      breaker.onReset(() => this.circuitListeners.forEach((listener) => listener(uid, false)));
      policies = { bulkhead: bulkhead(minerConcurrency, minerConcurrency * 4), breaker };
      this.policies.set(uid, policies);
    }
    return policies;
  }

  /** Fails as circuit_open during the cooldown, before a call of the budget is taken for it. */
  private refuseOpenCircuit(uid: number): void {
    if (this.isCircuitOpen(uid))
      throw new MinerCallError('circuit_open', 'circuit open after repeated failures');
  }

  /** Refuses a call we may not send (a refused address, no call left in the budget). */
  private async takeBudget(
    miner: MinerTarget,
    axon: AxonTarget,
    synapse: SynapseName,
    purpose: CallPurpose,
  ): Promise<void> {
    // IP literals (all a chain lists) are refused here; host names when they resolve, at
    // connect time, after the budget was taken: a wasted call, never an extra one.
    if (isIP(axon.ip) && !this.addresses.allows(axon.ip))
      throw new MinerCallError('address_refused', new AddressRefusedError(axon.ip).message);
    const taken = await this.budgets
      .take(miner.hotkey, synapse, purpose)
      .catch((error: unknown) => {
        // Postgres away: a call not counted could overspend the budget we share with the
        // validator. Not sent, and not the miner's doing (it failed as `network` before, and
        // an outage during the index sync cost every miner its credibility).
        throw new MinerCallError(
          'no_budget',
          `${synapse} not sent: the call budget could not be read (${(error as Error).message})`,
        );
      });
    if (taken.kept) throw new KeptForChecksError(synapse, taken.freeAt);
    if (!taken.granted)
      throw new MinerCallError(
        'no_budget',
        `no ${synapse} call left in this miner's budget${purpose === 'task' ? " beyond users' reserve" : ''}`,
      );
  }

  private async send(
    miner: MinerTarget,
    axon: AxonTarget,
    synapse: SynapseName,
    fields: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<unknown> {
    const signed = buildSignedRequest(
      synapse,
      fields,
      timeoutMs / 1000,
      axon,
      newTerminal(this.identity.hotkey, this.clock.now().getTime()),
      (message) => this.identity.keypair.sign(message),
    );
    // One turn of the event loop first, so that undici reads a close the axon sent while we
    // were busy (its keep-alive ended, uvicorn's after 5 s) and drops that connection: sent on
    // it, the call would fail as `network`, the miner's fault.
    await nextTurn();
    const response = await request(signed.url, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
      signal,
      dispatcher: this.agent,
    });
    if (response.statusCode !== 200) {
      const message = errorMessage(await readCapped(response.body, ERROR_BODY_BYTES, true));
      throw await this.refusal(miner, synapse, response.statusCode, message);
    }
    const text = await readCapped(
      response.body,
      this.maxResponseBytes(synapse),
      false,
      Number(response.headers['content-length'] ?? 0),
    );
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new MinerCallError('malformed', 'response is not JSON');
    }
  }

  /**
   * An honest index of 350,000 buckets can be several times the other answers' cap
   * (docs/miner-protocol.md, "Answer sizes"): GetMinerIndex has a cap of its own.
   */
  private maxResponseBytes(synapse: SynapseName): number {
    const { minerMaxIndexResponseBytes, minerMaxResponseBytes } = this.config.network;
    return synapse === 'GetMinerIndex' ? minerMaxIndexResponseBytes : minerMaxResponseBytes;
  }

  /** What a non-200 status means, with the cooldowns and the once-an-hour logs it calls for. */
  private async refusal(
    miner: MinerTarget,
    synapse: SynapseName,
    status: number,
    message: string,
  ): Promise<MinerCallError> {
    const refusal = STATUS_REFUSALS[status];
    if (!refusal) {
      if (status === 408) return new MinerCallError('timeout', 'the axon timed out (408)');
      if (status === 503) return new MinerCallError('busy', 'the axon is busy (503)');
      return new MinerCallError('http_error', `HTTP ${status}`);
    }
    const spentUntil = refusal === 'blacklisted' ? await this.spendBudget(miner, synapse) : null;
    if (!spentUntil) this.cooldowns.start(miner.hotkey, synapse, refusal, COOLDOWN_MS[refusal]);
    if (this.cooldowns.shouldLog(`${miner.hotkey}|${synapse}|${refusal}`, LOG_EVERY_MS)) {
      const who = `miner ${miner.uid} (${miner.hotkey})`;
      if (refusal === 'not_served')
        this.logger.log(`${who} does not serve ${synapse} (404): not asked again for an hour`);
      else if (refusal === 'blacklisted' && spentUntil)
        this.logger.warn(
          `${who} refused our ${synapse} call (403): ${message}. Its ${synapse} budget counts ` +
            `as spent until ${spentUntil.toISOString()}: its own window will have reset`,
        );
      else if (refusal === 'blacklisted')
        this.logger.warn(`${who} blacklists our ${synapse} calls (403): ${message}`);
      else
        this.logger.warn(
          `${who} could not verify our ${synapse} call (401): ${message}. Check this machine's ` +
            `clock (nonces are nanoseconds of wall time) and that hotkey ${this.identity.hotkey} ` +
            'is registered in the metagraph the miner sees',
        );
    }
    return new MinerCallError(refusal, `HTTP ${status}: ${message}`);
  }

  /**
   * After a 403: the synapse's budget at this miner is spent until the miner's window has reset
   * (null without a budget). Should Postgres be away, this replica falls back to a cooldown.
   */
  private async spendBudget(miner: MinerTarget, synapse: SynapseName): Promise<Date | null> {
    try {
      return (await this.budgets.spend(miner.hotkey, synapse)) ?? null;
    } catch (error) {
      this.logger.warn(
        `miner ${miner.uid}: its 403 to ${synapse} could not be recorded in its budget: ${(error as Error).message}`,
      );
      return null;
    }
  }
}

/** The axon as the signed headers name it, from the metagraph's `http://host:port`. */
function axonOf(miner: MinerTarget): AxonTarget {
  let url: URL;
  try {
    url = new URL(miner.axonUrl);
  } catch {
    throw new MinerCallError('network', `axon URL ${miner.axonUrl} is not a URL`);
  }
  const port = Number(url.port || 80);
  return { ip: url.hostname.replace(/^\[|\]$/g, ''), port, hotkey: miner.hotkey };
}

/**
 * Reads the body, aborting as soon as it grows past `maxBytes` (never buffers more). With
 * `truncate`, keeps the first `maxBytes` instead of failing (error bodies).
 */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number,
  truncate: boolean,
  declared = 0,
): Promise<string> {
  if (declared > maxBytes && !truncate) {
    body.destroy();
    throw new MinerCallError('oversize', `response of ${declared} bytes exceeds ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      if (truncate) break;
      throw new MinerCallError('oversize', `response exceeds ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An axon's error body is `{"message": "..."}`; shortened, as it is the miner's text. */
function errorMessage(text: string): string {
  try {
    const { message } = JSON.parse(text) as { message?: unknown };
    if (typeof message === 'string') return message.slice(0, 200);
  } catch {
    // not JSON: fall through
  }
  return text.slice(0, 200) || 'no message';
}
