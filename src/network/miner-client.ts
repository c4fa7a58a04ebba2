import { Injectable } from '@nestjs/common';
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
  isTaskCancelledError,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
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
export class MinerClient {
  private readonly policies = new Map<number, MinerPolicies>();
  private readonly circuitListeners: CircuitListener[] = [];

  constructor(@InjectConfig() private readonly config: AppConfig) {}

  async call(miner: MinerAddress, endpoint: MinerEndpoint, body: object, timeoutMs: number): Promise<MinerReply> {
    const { bulkhead: limiter, breaker } = this.policiesFor(miner.uid);
    const started = performance.now();
    try {
      const reply = await wrap(limiter, breaker, timeout(timeoutMs, TimeoutStrategy.Aggressive)).execute(({ signal }) =>
        this.post(`${miner.axonUrl.replace(/\/+$/, '')}/${endpoint}`, body, signal),
      );
      return { body: reply, latencyMs: performance.now() - started };
    } catch (error) {
      throw classify(error, timeoutMs);
    }
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
      // A full bulkhead says nothing about the miner's health, so it must not trip the breaker.
      const breaker = circuitBreaker(
        handleWhen((error) => !isBulkheadRejectedError(error)),
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
      headers: { 'content-type': 'application/json', [VALIDATOR_HOTKEY_HEADER]: this.config.validatorHotkey },
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
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new MinerCallError('oversize', `response exceeds ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function classify(error: unknown, timeoutMs: number): MinerCallError {
  if (error instanceof MinerCallError) return error;
  if (isTaskCancelledError(error)) return new MinerCallError('timeout', `no answer within ${timeoutMs} ms`);
  if (isBrokenCircuitError(error)) return new MinerCallError('circuit_open', 'circuit open after repeated failures');
  if (isBulkheadRejectedError(error)) return new MinerCallError('busy', 'too many calls in flight to this miner');
  return new MinerCallError('network', error instanceof Error ? error.message : String(error));
}
