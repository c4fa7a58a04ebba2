import { setMaxListeners } from 'node:events';
import { isIP } from 'node:net';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { timeout, TimeoutStrategy, wrap } from 'cockatiel';
import { Agent, Dispatcher, request } from 'undici';
import { Clock } from '../../common/clock/clock';
import { debugEnabled, shortHotkey } from '../../common/logging/debug-lines';
import { minerFields } from '../../common/logging/miner-fields';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MINER_CONNECT_TIMEOUT_MS } from '../../config/miner-call-limits';
import { AxonTarget, buildSignedRequest, newTerminal } from '../bittensor/dendrite';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { maxAnswerValues, parseMinerJson, UnreadableJsonError } from '../sn13/miner-json';
import { SynapseName } from '../../common/synapse-names';
import { AddressPolicy, AddressRefusedError } from './address-policy';
import { CallBudgets, CallPurpose } from './call-budgets';
import { axonOf, cappedChunks, errorMessage, readCapped } from './axon-http';
import { CircuitLines, CircuitListener, CircuitMiner, MinerCircuits } from './miner-circuits';
import {
  BudgetUnreadableError,
  classify,
  KeptForChecksError,
  MinerCallError,
  NOT_THE_MINERS_FAULT,
  refusedAtConnect,
} from './miner-failures';
import { MinerFailureReason } from '../query-failures';
import { MinerRefusals } from './miner-refusals';
import { AnswerStream, MinerReply, MinerTarget, replyOf } from './miner-reply';

/** What a call abandoned by our shutdown surfaces as before it is called `shutdown`. */
const ABANDONED_AS: ReadonlySet<MinerFailureReason> = new Set(['timeout', 'network']);

/** Error bodies are read for their message only. */
const ERROR_BODY_BYTES = 4096;

type RefusedListener = (miner: CircuitMiner) => void;

/**
 * Calls miners the way a Bittensor validator's dendrite does: each call signed with the
 * validator's hotkey (dendrite.ts), sent only to allowed addresses (address-policy.ts), within
 * the miner's call budget (call-budgets.ts), not while the miner's refusals say to wait
 * (miner-refusals.ts). Per miner: bounded concurrency (a bulkhead) and a circuit breaker opened by
 * consecutive faults (miner-circuits.ts); per call a timeout, all from cockatiel, and a cap on
 * the response size (axon-http.ts). The answer is returned unchecked: it is untrusted.
 */
@Injectable()
export class MinerClient implements OnModuleDestroy {
  private readonly logger = new Logger(MinerClient.name);
  private readonly circuits: MinerCircuits;
  private readonly refusedListeners: RefusedListener[] = [];
  /** Aborted at shutdown: calls in flight end at once instead of at their timeout. */
  private readonly shutdown = new AbortController();
  private readonly addresses: AddressPolicy;
  private readonly agent: Dispatcher;
  private readonly refusals: MinerRefusals;

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
    this.agent = new Agent({ connect: this.addresses.connector(MINER_CONNECT_TIMEOUT_MS) });
    this.circuits = new MinerCircuits(
      config.network,
      (error) => !NOT_THE_MINERS_FAULT.has(this.failureOf(error, 0).reason),
      this.circuitLines(),
    );
    this.refusals = new MinerRefusals(budgets, () => clock.now().getTime(), this.logger);
  }

  /**
   * Calls `synapse` on the miner with the synapse's own `fields`, within `timeoutMs` (only our
   * shutdown cuts a call shorter: a miner is judged by the time it was given). `purpose`: whose
   * call it is,
   * which reserves of the budget it must leave (CallBudgets: a task's leaves users theirs,
   * users' and tasks' leave the spot checks theirs). With `stream`, the answer is read as it
   * arrives, within the stream's own cap, and the reply's body is what the stream's reader
   * returns.
   */
  async call(
    miner: MinerTarget,
    synapse: SynapseName,
    fields: Record<string, unknown>,
    timeoutMs: number,
    purpose: CallPurpose = 'user',
    stream?: AnswerStream,
  ): Promise<MinerReply> {
    const started = performance.now();
    // Set as the request goes out: a failure after it took the miner's time, whatever the
    // miner answered (a 503 too); one before it (a cooldown, our bulkhead, circuit or budget)
    // has no latency to record.
    let sent = false;
    try {
      const refused = this.refusals.active(miner.hotkey, synapse);
      if (refused) throw new MinerCallError(refused, `${synapse} refused recently (${refused})`);
      const axon = axonOf(miner);
      const { bulkhead: limiter, breaker } = this.circuits.of(miner);
      const guarded = wrap(breaker, timeout(timeoutMs, TimeoutStrategy.Aggressive));
      // The budget is taken outside the breaker: in cockatiel's half-open trial any outcome it
      // does not count as a failure closes the circuit, so a call we refused ourselves (no
      // budget, a refused address) would close a dead miner's circuit without calling it.
      const { body, bytes } = await limiter.execute(async (context) => {
        const release = this.circuits.admit(miner);
        try {
          const takenAt = await this.takeBudget(miner, axon, synapse, purpose);
          try {
            return await guarded.execute((inner) => {
              // Our shutdown, begun while the budget was taken, has aborted the signal already:
              // the call is refused here unsent (failureOf: shutdown), not marked as gone out.
              inner.signal.throwIfAborted();
              sent = true;
              return this.send(miner, axon, synapse, fields, timeoutMs, inner.signal, stream);
            }, context.signal);
          } catch (error) {
            // Refused unsent by the breaker (other calls opened the circuit while the budget was
            // taken) or by our shutdown, refused by the miner before it counted the call (a 403
            // for who we are), or its connection refused: the miner never counted it, so the
            // budget does not.
            const uncounted =
              (error instanceof MinerCallError && error.uncounted) || refusedAtConnect(error);
            if ((!sent || uncounted) && takenAt) await this.giveBack(miner, synapse, takenAt);
            throw error;
          }
        } finally {
          release();
        }
      }, this.shutdown.signal);
      const latencyMs = performance.now() - started;
      this.metrics.observeMinerCall(miner.uid, synapse, latencyMs / 1000);
      if (debugEnabled())
        this.logCall(miner, synapse, purpose, latencyMs, { outcome: 'ok', bytes });
      return replyOf(body, latencyMs, () =>
        this.metrics.observeMinerCall(miner.uid, synapse, undefined, 'wrong_schema'),
      );
    } catch (error) {
      const failure = this.failureOf(error, timeoutMs);
      // A host name our address policy refuses is refused at connect time, once sent: it never
      // reached the miner either.
      const reached = sent && failure.reason !== 'address_refused';
      const seconds = reached ? (performance.now() - started) / 1000 : undefined;
      this.metrics.observeMinerCall(miner.uid, synapse, seconds, failure.reason);
      if (debugEnabled())
        this.logCall(miner, synapse, purpose, performance.now() - started, {
          outcome: failure.reason,
          sent: reached,
          error: failure.message,
        });
      if (failure.reason === 'address_refused')
        this.refusedListeners.forEach((listener) =>
          listener({ uid: miner.uid, hotkey: miner.hotkey }),
        );
      // A host name refused at connect time was sent: its budget call stays taken.
      failure.unsent = !sent;
      throw failure;
    }
  }

  /**
   * The debug line of one call (LOG_LEVEL=debug; built only then): who, which synapse, for whom,
   * how it ended (`ok` or the failure's reason, with its message), how long it took, and the
   * answer's size. Never the request's fields nor the answer's contents.
   */
  private logCall(
    miner: MinerTarget,
    synapse: SynapseName,
    purpose: CallPurpose,
    ms: number,
    end: { outcome: string; bytes?: number; sent?: boolean; error?: string },
  ): void {
    const duration = Math.round(ms);
    const said =
      end.outcome === 'ok'
        ? `ok in ${duration} ms, ${end.bytes} bytes`
        : `${end.outcome} after ${duration} ms: ${end.error}`;
    this.logger.debug(
      {
        ...minerFields(miner),
        synapse,
        purpose,
        ...end,
        duration_ms: duration,
      },
      `miner ${miner.uid} (${shortHotkey(miner.hotkey)}) ${synapse}: ${said}`,
    );
  }

  /**
   * A miner's circuit opening (warn) and closing again (info), one line each per outage of the
   * miner's, not per failed trial: without them a network of failing miners left nothing in the
   * log at `info` (an on-call audit's finding); each call's failure is a debug line.
   */
  private circuitLines(): CircuitLines {
    const { breakerFailures, breakerCooldownMs } = this.config.network;
    return {
      opened: (miner, error) => {
        const last = classify(error, 0);
        const said = last.reason === 'timeout' ? 'timeout' : `${last.reason}: ${last.message}`;
        this.logger.warn(
          { ...minerFields(miner), reason: last.reason },
          `miner ${miner.uid}: circuit opened after ${breakerFailures} failures in a row (the last: ${said}); ` +
            `not called for ${breakerCooldownMs / 1000} s at a time until a trial call answers`,
        );
      },
      closed: (miner, openMs) =>
        this.logger.log(
          { ...minerFields(miner), open_seconds: Math.round(openMs / 1000) },
          `miner ${miner.uid}: circuit closed, answering again after ${Math.round(openMs / 1000)} s`,
        ),
    };
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
    return this.refusals.active(hotkey, synapse) === undefined;
  }

  /** Why the miner is in a cooldown for this synapse (`not_served`: 404, …), if it is. */
  refusalOf(hotkey: string, synapse: SynapseName): MinerFailureReason | undefined {
    return this.refusals.active(hotkey, synapse);
  }

  /** True when `host` (an axon's) resolves only to addresses MINER_ALLOWED_NETWORKS allows. */
  permitsHost(host: string): Promise<boolean> {
    return this.addresses.permits(host);
  }

  /**
   * True while the miner's circuit is open and its cooldown lasts, or a call is its half-open
   * trial (MinerCircuits.isOpen).
   */
  isCircuitOpen(miner: CircuitMiner): boolean {
    return this.circuits.isOpen(miner);
  }

  onCircuitChange(listener: CircuitListener): void {
    this.circuits.onChange(listener);
  }

  /** Called when a miner's address turned out to be outside MINER_ALLOWED_NETWORKS. */
  onAddressRefused(listener: RefusedListener): void {
    this.refusedListeners.push(listener);
  }

  /**
   * Refuses a call we may not send (a refused address, no call left in the budget); returns
   * when the call taken was counted (undefined for a synapse without a budget).
   */
  private async takeBudget(
    miner: MinerTarget,
    axon: AxonTarget,
    synapse: SynapseName,
    purpose: CallPurpose,
  ): Promise<Date | undefined> {
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
        throw new BudgetUnreadableError(synapse, (error as Error).message);
      });
    if ((taken.kept || !taken.granted) && debugEnabled())
      this.logger.debug(
        {
          uid: miner.uid,
          hotkey: shortHotkey(miner.hotkey),
          synapse,
          purpose,
          kept_for_checks: taken.kept,
          free_at: taken.freeAt?.toISOString() ?? null,
        },
        `miner ${miner.uid} (${shortHotkey(miner.hotkey)}) ${synapse}: not called, ` +
          (taken.kept
            ? 'its last call is kept for the index spot checks'
            : `no call left in its budget${purpose === 'task' ? " beyond users' reserve" : ''}`),
      );
    if (taken.kept) throw new KeptForChecksError(synapse, taken.freeAt);
    if (!taken.granted)
      throw new MinerCallError(
        'no_budget',
        `no ${synapse} call left in this miner's budget${purpose === 'task' ? " beyond users' reserve" : ''}`,
      );
    return taken.at;
  }

  /**
   * Gives back a budget call never sent; should Postgres fail, it stays counted (the safe side).
   */
  private async giveBack(miner: MinerTarget, synapse: SynapseName, at: Date): Promise<void> {
    await this.budgets.giveBack(miner.hotkey, synapse, at).catch((error: Error) => {
      this.logger.warn(
        minerFields(miner),
        `miner ${miner.uid}: a ${synapse} call not sent could not be given back to its budget: ${error.message}`,
      );
    });
  }

  private async send(
    miner: MinerTarget,
    axon: AxonTarget,
    synapse: SynapseName,
    fields: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal,
    stream: AnswerStream | undefined,
  ): Promise<{ body: unknown; bytes?: number }> {
    const signed = buildSignedRequest(
      synapse,
      fields,
      timeoutMs / 1000,
      axon,
      newTerminal(this.identity.hotkey, this.clock.now().getTime()),
      (message) => this.identity.keypair.sign(message),
    );
    const response = await request(signed.url, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
      signal,
      dispatcher: this.agent,
    });
    if (response.statusCode !== 200) {
      const message = errorMessage(await readCapped(response.body, ERROR_BODY_BYTES, true));
      throw await this.refusals.ofStatus(miner, synapse, response.statusCode, message);
    }
    const declared = Number(response.headers['content-length'] ?? 0);
    try {
      if (stream)
        return {
          body: await stream.read(cappedChunks(response.body, stream.maxBytes, false, declared)),
        };
      const maxBytes = this.maxResponseBytes(synapse);
      const text = await readCapped(response.body, maxBytes, false, declared);
      const body = parseMinerJson(text, maxAnswerValues(synapse, maxBytes));
      // The answer's size, for the debug line only (a pass over up to 96 MB of text otherwise).
      return { body, bytes: debugEnabled() ? Buffer.byteLength(text) : undefined };
    } catch (error) {
      if (!(error instanceof UnreadableJsonError)) throw error;
      throw new MinerCallError('malformed', `response ${error.message}`);
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
}
