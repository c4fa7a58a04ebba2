import { setMaxListeners } from 'node:events';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  BulkheadPolicy,
  bulkhead,
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  handleWhen,
  isBrokenCircuitError,
  isBulkheadRejectedError,
  TaskCancelledError,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { MetricsService } from '../common/metrics/metrics.service';
import { MinerEndpoint, VALIDATOR_HOTKEY_HEADER } from './protocol';

export interface MinerAddress {
  uid: number;
  axonUrl: string;
}

export type MinerFailureReason =
  | 'timeout'
  | 'http_error'
  | 'malformed'
  | 'oversize'
  | 'wrong_schema'
  | 'network'
  | 'circuit_open'
  | 'busy';

export class MinerCallError extends Error {
  constructor(
    readonly reason: MinerFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'MinerCallError';
  }
}

export interface MinerReply {
  body: unknown;
  latencyMs: number;
}

interface MinerPolicies {
  bulkhead: BulkheadPolicy;
  breaker: CircuitBreakerPolicy;
}

type CircuitListener = (uid: number, open: boolean) => void;

/**
 * Talks the miner protocol over HTTP. Per miner: bounded concurrency (a bulkhead whose
 * rejections are not the miner's fault), a circuit breaker opened by consecutive failures, and
 * per call a timeout and a cap on the response size. All from cockatiel; nothing hand-rolled.
 */
@Injectable()
export class MinerClient implements OnModuleDestroy {
  private readonly policies = new Map<number, MinerPolicies>();
  private readonly circuitListeners: CircuitListener[] = [];
  /** Aborted at shutdown: calls in flight end at once instead of at their timeout. */
  private readonly shutdown = new AbortController();

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    // Every call in flight listens on this signal; many concurrent calls are normal, not a leak.
    setMaxListeners(0, this.shutdown.signal);
  }

  /** `signal` lets the caller give up early (a query's stragglers); that counts as a timeout. */
  async call(
    miner: MinerAddress,
    endpoint: MinerEndpoint,
    body: object,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<MinerReply> {
    const { bulkhead: limiter, breaker } = this.policiesFor(miner.uid);
    const started = performance.now();
    try {
      const reply = await wrap(
        limiter,
        breaker,
        timeout(timeoutMs, TimeoutStrategy.Aggressive),
      ).execute(
        (context) =>
          this.post(`${miner.axonUrl.replace(/\/+$/, '')}/${endpoint}`, body, context.signal),
        signal ? AbortSignal.any([this.shutdown.signal, signal]) : this.shutdown.signal,
      );
      const latencyMs = performance.now() - started;
      this.metrics.observeMinerCall(miner.uid, endpoint, latencyMs / 1000);
      return { body: reply, latencyMs };
    } catch (error) {
      const failure = classify(error, timeoutMs);
      // Refused here (full bulkhead, open circuit): the miner was not called, no latency.
      const called = failure.reason !== 'busy' && failure.reason !== 'circuit_open';
      const seconds = called ? (performance.now() - started) / 1000 : undefined;
      this.metrics.observeMinerCall(miner.uid, endpoint, seconds, failure.reason);
      throw failure;
    }
  }

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  /** True while the miner's circuit is open (it failed repeatedly and is being left alone). */
  isCircuitOpen(uid: number): boolean {
    return this.policies.get(uid)?.breaker.state === CircuitState.Open;
  }

  onCircuitChange(listener: CircuitListener): void {
    this.circuitListeners.push(listener);
  }

  private policiesFor(uid: number): MinerPolicies {
    let policies = this.policies.get(uid);
    if (!policies) {
      const { minerConcurrency, breakerFailures, breakerCooldownMs } = this.config.network;
      // A full bulkhead or our own shutdown says nothing about the miner's health.
      const breaker = circuitBreaker(
        handleWhen((error) => !isBulkheadRejectedError(error) && !this.shutdown.signal.aborted),
        { halfOpenAfter: breakerCooldownMs, breaker: new ConsecutiveBreaker(breakerFailures) },
      );
      breaker.onBreak(() => this.circuitListeners.forEach((listener) => listener(uid, true)));
      breaker.onReset(() => this.circuitListeners.forEach((listener) => listener(uid, false)));
      policies = { bulkhead: bulkhead(minerConcurrency, minerConcurrency * 4), breaker };
      this.policies.set(uid, policies);
    }
    return policies;
  }

  private async post(url: string, body: object, signal: AbortSignal): Promise<unknown> {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [VALIDATOR_HOTKEY_HEADER]: this.config.validatorHotkey,
      },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new MinerCallError('http_error', `HTTP ${response.status}`);
    }
    const text = await readCapped(response, this.config.network.minerMaxResponseBytes);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new MinerCallError('malformed', 'response is not JSON');
    }
  }
}

/** Reads the body, aborting as soon as it grows past `maxBytes` (never buffers more). */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new MinerCallError('oversize', `response of ${declared} bytes exceeds ${maxBytes}`);
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  // Leaving the loop early cancels the stream, so an oversize body is never read to the end.
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > maxBytes)
      throw new MinerCallError('oversize', `response exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function classify(error: unknown, timeoutMs: number): MinerCallError {
  if (error instanceof MinerCallError) return error;
  if (isBulkheadRejectedError(error))
    return new MinerCallError('busy', 'too many calls in flight to this miner');
  if (isBrokenCircuitError(error))
    return new MinerCallError('circuit_open', 'circuit open after repeated failures');
  // Not cockatiel's isTaskCancelledError: in 3.2.1 it tests for the bulkhead error instead.
  if (error instanceof TaskCancelledError)
    return new MinerCallError('timeout', `no answer within ${timeoutMs} ms`);
  return new MinerCallError('network', error instanceof Error ? error.message : String(error));
}
