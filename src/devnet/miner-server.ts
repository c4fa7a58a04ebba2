import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { AxonGuard, refusalBody } from './axon-checks';
import { CallLimits } from './call-limits';
import { streamOversize } from './oversize-answer';
import { DataItem } from '../network/protocol';
import { SYNAPSE_NAMES, SynapseName } from '../common/synapse-names';
import {
  DEFAULT_VALIDATOR_MIN_STAKE,
  isValidator,
  ValidatorStanding,
} from '../common/validator-standing';
import { hasFaults, MinerBehaviour, validateBehaviour } from './behaviour';
import { readBody, sendJson, sendText } from './http-util';
import { MinerAnswers } from './miner-answers';
import { parseMinerRequest } from './miner-requests';
import { MinerStore } from './miner-store';
import { createRng, deriveSeed, Rng } from './rng';

/**
 * One simulated subnet 13 miner: an HTTP server that checks every call as bittensor's axon does
 * (axon-checks.ts: 404, 400, 403 blacklist and call limits, 401 signature and nonce, body hash)
 * and answers the synapses in their real shapes from the items it holds (miner-answers.ts),
 * with the faults, latency and refusals its behaviour asks for.
 */

export type RequestCounts = Record<SynapseName, number>;

/** Calls of one synapse that arrived, and how many of them were refused with 403. */
export interface SynapseCount {
  calls: number;
  refused: number;
}

export type CallCounts = Record<SynapseName, SynapseCount>;

/** One call received, as the miner saw it. */
export interface ReceivedCall {
  /** The path's synapse name (any name, even unknown ones). */
  synapse: string;
  /** `bt_header_dendrite_hotkey`, when sent. */
  caller: string | null;
  status: number;
  /** The devnet clock, in milliseconds. */
  at: number;
}

/** What a miner knows of the caller from its metagraph. */
export type CallerStanding = ValidatorStanding;

export interface MinerServerOptions {
  uid: number;
  /** The miner's hotkey address: the signed message names it. */
  hotkey: string;
  seed: number;
  /** The corpus' `now`: fabricated data is placed relative to it. */
  now: Date;
  /** What the miner holds. */
  items: readonly DataItem[];
  /** Items to disguise fabricated answers as (usually the whole corpus). */
  templates: readonly DataItem[];
  behaviour?: MinerBehaviour;
  /**
   * 404 to OnDemandRequest whatever the behaviour (public subnet 13 miners since December 2025).
   */
  storedOnly?: boolean;
  /** The caller's standing in the metagraph, or undefined for an unknown hotkey. */
  standing(hotkey: string): CallerStanding | undefined;
  /** The devnet's clock (ms): nonces, call windows and the request log use it. */
  clock(): number;
  /** The clock's milliseconds per real one (CLOCK_SIMULATION's rate; default 1). */
  clockRate?: number;
}

const MAX_REQUEST_BYTES = 1024 * 1024;

export class MinerServer {
  readonly uid: number;
  private readonly server: Server;
  private readonly answers: MinerAnswers;
  private readonly guard: AxonGuard;
  private readonly received: ReceivedCall[] = [];
  // Separate streams so that, e.g., adding latency does not change which calls fail.
  private readonly faultRng: Rng;
  private readonly latencyRng: Rng;
  private readonly pendingWaits = new Set<() => void>();
  private readonly limits: CallLimits;
  private currentBehaviour: MinerBehaviour;
  private baseUrl: string | undefined;
  private stopped = false;

  constructor(private readonly options: MinerServerOptions) {
    this.uid = options.uid;
    this.currentBehaviour = validateBehaviour({ ...options.behaviour });
    this.faultRng = createRng(deriveSeed(options.seed, 'miner', options.uid, 'faults'));
    this.latencyRng = createRng(deriveSeed(options.seed, 'miner', options.uid, 'latency'));
    this.answers = new MinerAnswers({
      uid: options.uid,
      seed: options.seed,
      now: options.now,
      store: new MinerStore(options.items),
      templates: options.templates,
      rng: createRng(deriveSeed(options.seed, 'miner', options.uid, 'content')),
    });
    this.limits = new CallLimits(options.clock());
    this.guard = new AxonGuard({
      hotkey: options.hotkey,
      serves: (synapse) =>
        SYNAPSE_NAMES.includes(synapse as SynapseName) &&
        !(
          synapse === 'OnDemandRequest' &&
          (options.storedOnly || this.currentBehaviour.noOnDemand)
        ),
      blacklist: (caller, synapse) => this.blacklist(caller, synapse as SynapseName),
      nowMs: options.clock,
      clockRate: options.clockRate,
    });
    this.server = createServer((request, response) => this.handle(request, response));
  }

  get url(): string {
    if (!this.baseUrl) throw new Error(`miner ${this.uid} is not listening`);
    return this.baseUrl;
  }

  get behaviour(): MinerBehaviour {
    return this.currentBehaviour;
  }

  /** Takes effect for requests arriving from now on. */
  setBehaviour(behaviour: MinerBehaviour): void {
    this.currentBehaviour = validateBehaviour({ ...behaviour });
  }

  /** 404 to OnDemandRequest whatever the behaviour. */
  get storedOnly(): boolean {
    return this.options.storedOnly === true;
  }

  /** Every call received since the start (or the last resetCounts), refused ones included. */
  calls(): readonly ReceivedCall[] {
    return this.received;
  }

  requestCounts(): RequestCounts {
    const counts = Object.fromEntries(SYNAPSE_NAMES.map((name) => [name, 0])) as RequestCounts;
    for (const { synapse } of this.received)
      if (synapse in counts) counts[synapse as SynapseName]++;
    return counts;
  }

  /**
   * Per synapse: calls received and calls refused with 403 (a call still in progress has no status
   * yet).
   */
  callCounts(): CallCounts {
    const counts = Object.fromEntries(
      SYNAPSE_NAMES.map((name) => [name, { calls: 0, refused: 0 }]),
    ) as CallCounts;
    for (const { synapse, status } of this.received) {
      const count = counts[synapse as SynapseName] as SynapseCount | undefined;
      if (!count) continue;
      count.calls++;
      if (status === 403) count.refused++;
    }
    return counts;
  }

  /** Forgets the calls received so far (counts and log); the call limits' windows go on. */
  resetCounts(): void {
    this.received.length = 0;
  }

  /** Port 0 picks a free ephemeral port. Resolves with the miner's URL. */
  listen(host: string, port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address() as AddressInfo;
        const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        this.baseUrl = `http://${hostPart}:${address.port}`;
        resolve(this.baseUrl);
      });
    });
  }

  /** Closes the server, drops every connection (hanging ones included) and pending delays. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const cancel of this.pendingWaits) cancel();
    this.pendingWaits.clear();
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /**
   * The subnet's blacklist: unknown hotkeys, then callers without a validator permit and enough
   * stake, then (strict budget) callers over their limit in the current window. The call is
   * counted before the limit is checked, so refused calls count too, as on the real miners.
   */
  private blacklist(caller: string | undefined, synapse: SynapseName): string | null {
    const behaviour = this.currentBehaviour;
    if (behaviour.blacklistAll) return 'every caller is blacklisted (blacklist-all)';
    const standing = caller === undefined ? undefined : this.options.standing(caller);
    if (caller === undefined || !standing) return `Unrecognized hotkey ${caller ?? '(none)'}`;
    // Subnet 13's miners run with its default minimum, whatever the gateway is configured with.
    if (!isValidator(standing, DEFAULT_VALIDATOR_MIN_STAKE))
      return `Hotkey ${caller} is not a validator`;
    if (behaviour.strictBudget === false) return null;
    return this.limits.overLimit(caller, synapse, this.options.clock())
      ? `Hotkey ${caller} over eval period request limit for ${synapse}`
      : null;
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    // Node's parser takes request targets WHATWG URL refuses (`http://[`, `http://a:99999/x`):
    // read here, outside respond()'s catch, such a URL threw in the request listener, an
    // uncaught error that ended the process (npm start's gateway hosts the devnet). uvicorn,
    // the real axons' server, answers an invalid target 400.
    const target = request.url ?? '/';
    if (!URL.canParse(target, 'http://miner'))
      return sendJson(response, 400, { message: 'Invalid HTTP request received.' });
    const path = new URL(target, 'http://miner').pathname;
    const hotkey = request.headers.bt_header_dendrite_hotkey;
    const call: ReceivedCall = {
      synapse: path.split('/')[1] ?? '',
      caller: typeof hotkey === 'string' ? hotkey : null,
      status: 0,
      at: this.options.clock(),
    };
    this.received.push(call);
    response.once('finish', () => (call.status = response.statusCode));
    this.respond(request, response, path).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else sendJson(response, 500, { message: `devnet miner failed: ${String(error)}` });
    });
  }

  private async respond(
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
  ): Promise<void> {
    const body = await readBody(request, MAX_REQUEST_BYTES);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too-large') return sendJson(response, 413, { message: 'body too large' });
    const verdict = this.guard.check(path, request.headers, body.text);
    if (!verdict.ok) return sendJson(response, verdict.status, refusalBody(verdict));
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      return sendJson(response, 405, { detail: 'Method Not Allowed' });
    }
    const synapse = verdict.synapse as SynapseName;
    const parsed = parseMinerRequest(synapse, verdict.body);
    // The axon builds the synapse from the body in a dependency (`verify_body_integrity`): the
    // model's ValidationError reaches its middleware, which answers 500 "Internal Server Error
    // #<id>" and logs the reason (said here in its place, for tests and whoever reads the devnet).
    if (!parsed.ok)
      return sendJson(response, 500, { message: `Internal Server Error: ${parsed.error}` });

    const behaviour = this.currentBehaviour;
    if (!(await this.wait(this.latencyOf(behaviour)))) return;
    const faults = this.faultsFor(synapse, behaviour);
    // A hanging miner keeps the request open; stop() destroys the socket.
    if (faults.hang) return;
    if (faults.http500) return sendJson(response, 500, { message: 'Internal Server Error' });
    if (faults.oversize)
      return streamOversize(response, synapse, this.options.items[0] ?? this.options.templates[0]);
    const outputs = this.answers.answer(parsed.value, faults);
    if (outputs === 'error')
      return sendJson(response, 500, { message: 'Internal Server Error: no protocol version' });
    const text = JSON.stringify({
      ...verdict.body,
      ...outputs,
      axon: { ...(verdict.body.axon as object), status_code: 200, status_message: 'Success' },
    });
    // A proper prefix of a JSON object is never valid JSON.
    if (faults.malformedJson) return sendText(response, 200, text.slice(0, text.length >> 1));
    sendText(response, 200, text);
  }

  private latencyOf(behaviour: MinerBehaviour): number {
    const latency = behaviour.latencyMs;
    if (latency === undefined) return 0;
    if (typeof latency === 'number') return latency;
    return latency.min + this.latencyRng.next() * (latency.max - latency.min);
  }

  /** Resolves true after `ms`, or false as soon as the miner stops. */
  private wait(ms: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const cancel = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.pendingWaits.delete(cancel);
        resolve(true);
      }, ms);
      this.pendingWaits.add(cancel);
    });
  }

  /** The behaviour's faults if they apply to this call, else none. */
  private faultsFor(synapse: SynapseName, behaviour: MinerBehaviour): MinerBehaviour {
    if (!hasFaults(behaviour)) return {};
    if (!(behaviour.endpoints ?? SYNAPSE_NAMES).includes(synapse)) return {};
    const rate = behaviour.faultRate ?? 1;
    if (rate < 1 && this.faultRng.next() >= rate) return {};
    return behaviour;
  }
}
