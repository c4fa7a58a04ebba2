import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  DataEntityBucketId,
  DataItem,
  MINER_ENDPOINTS,
  MinerEndpoint,
  OnDemandMinerRequest,
  VALIDATOR_HOTKEY_HEADER,
} from '../network/protocol';
import { compileQuery } from '../network/query-matcher';
import { hasFaults, MinerBehaviour, validateBehaviour } from './behaviour';
import { readJsonBody, sendJson, sendText, streamJsonArray } from './http-util';
import {
  corruptEntity,
  corruptIndex,
  corruptItem,
  fabricateEntities,
  fabricateIndex,
  fabricateItems,
  overclaimIndex,
} from './miner-faults';
import { MinerRequest, parseMinerRequest } from './miner-requests';
import { MinerStore, toEntity } from './miner-store';
import { createRng, deriveSeed, hashUnit, Rng } from './rng';

/** One simulated miner: an HTTP server answering the miner protocol from the items it holds. */

export type RequestCounts = Record<MinerEndpoint, number>;

/** Answers as sent: with the wrongSchema fault, items and entities may be anything. */
interface OnDemandBody {
  data: unknown[];
}

interface BucketBody {
  data_entities: unknown[];
}

export interface MinerServerOptions {
  uid: number;
  seed: number;
  /** The corpus' `now`: fabricated data is placed relative to it. */
  now: Date;
  /** What the miner holds. */
  items: readonly DataItem[];
  /** Items to disguise fabricated answers as (usually the whole corpus). */
  templates: readonly DataItem[];
  behaviour?: MinerBehaviour;
}

const MAX_REQUEST_BYTES = 1024 * 1024;
/** The gateway must refuse bodies over 16 MB; the oversize fault sends a little more than 17 MB. */
export const OVERSIZE_BYTES = 17 * 1024 * 1024 + 256 * 1024;

export class MinerServer {
  readonly uid: number;
  private readonly server: Server;
  private readonly store: MinerStore;
  private readonly counts: RequestCounts = {
    OnDemandRequest: 0,
    GetMinerIndex: 0,
    GetDataEntityBucket: 0,
  };
  // Separate streams so that, e.g., adding latency does not change which calls fail.
  private readonly faultRng: Rng;
  private readonly latencyRng: Rng;
  private readonly contentRng: Rng;
  private readonly pendingWaits = new Set<() => void>();
  private currentBehaviour: MinerBehaviour;
  private baseUrl: string | undefined;
  private stopped = false;

  constructor(private readonly options: MinerServerOptions) {
    this.uid = options.uid;
    this.store = new MinerStore(options.items);
    this.currentBehaviour = validateBehaviour({ ...options.behaviour });
    this.faultRng = createRng(deriveSeed(options.seed, 'miner', options.uid, 'faults'));
    this.latencyRng = createRng(deriveSeed(options.seed, 'miner', options.uid, 'latency'));
    this.contentRng = createRng(deriveSeed(options.seed, 'miner', options.uid, 'content'));
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

  requestCounts(): RequestCounts {
    return { ...this.counts };
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

  private handle(request: IncomingMessage, response: ServerResponse): void {
    this.respond(request, response).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else sendJson(response, 500, { error: `devnet miner failed: ${String(error)}` });
    });
  }

  private async respond(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://miner').pathname;
    const endpoint = MINER_ENDPOINTS.find((name) => path === `/${name}`);
    if (!endpoint) return sendJson(response, 404, { error: `no such endpoint: ${path}` });
    this.counts[endpoint]++;
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      return sendJson(response, 405, { error: 'miner endpoints only accept POST' });
    }
    const hotkey = request.headers[VALIDATOR_HOTKEY_HEADER];
    if (typeof hotkey !== 'string' || hotkey.trim() === '') {
      return sendJson(response, 401, { error: 'missing validator hotkey' });
    }
    const body = await readJsonBody(request, MAX_REQUEST_BYTES);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too-large') return sendJson(response, 413, { error: 'body too large' });
    if (body.kind === 'invalid-json') return sendJson(response, 400, { error: 'body is not JSON' });
    const parsed = parseMinerRequest(endpoint, body.value);
    if (!parsed.ok) return sendJson(response, 400, { error: parsed.error });

    const behaviour = this.currentBehaviour;
    if (!(await this.wait(this.latencyOf(behaviour)))) return;
    const faults = this.faultsFor(endpoint, behaviour);
    // A hanging miner keeps the request open; stop() destroys the socket.
    if (faults.hang) return;
    if (faults.http500) return sendJson(response, 500, { error: 'internal error' });
    if (faults.oversize) return this.streamOversize(response, endpoint);
    const text = JSON.stringify(this.answer(parsed.value, faults));
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
  private faultsFor(endpoint: MinerEndpoint, behaviour: MinerBehaviour): MinerBehaviour {
    if (!hasFaults(behaviour)) return {};
    if (!(behaviour.endpoints ?? MINER_ENDPOINTS).includes(endpoint)) return {};
    const rate = behaviour.faultRate ?? 1;
    if (rate < 1 && this.faultRng.next() >= rate) return {};
    return behaviour;
  }

  private answer(request: MinerRequest, faults: MinerBehaviour): unknown {
    switch (request.endpoint) {
      case 'OnDemandRequest':
        return this.answerOnDemand(request.query, faults);
      case 'GetMinerIndex':
        return this.answerIndex(faults);
      case 'GetDataEntityBucket':
        return this.answerBucket(request.bucketId, faults);
    }
  }

  private keeps(uri: string): boolean {
    return hashUnit(this.options.seed, 'partial', this.uid, uri) < 0.5;
  }

  private answerOnDemand(request: OnDemandMinerRequest, faults: MinerBehaviour): OnDemandBody {
    let items = this.store.matching(request);
    if (faults.partial) items = items.filter((item) => this.keeps(item.uri));
    items = items.slice(0, request.limit);
    if (faults.fabricate) {
      const count = Math.min(request.limit, Math.max(items.length, 5));
      const templates = this.options.templates.filter((item) => item.source === request.source);
      const query = compileQuery(request);
      items = fabricateItems(this.contentRng, query, templates, count, this.options.now);
    }
    return { data: faults.wrongSchema ? items.map(corruptItem) : items };
  }

  private answerIndex(faults: MinerBehaviour): unknown {
    let index = this.store.minerIndex();
    if (faults.fabricate) index = fabricateIndex(index, this.options.now);
    if (faults.overclaimSizes !== undefined) index = overclaimIndex(index, faults.overclaimSizes);
    return faults.wrongSchema ? corruptIndex(index) : index;
  }

  private answerBucket(bucketId: DataEntityBucketId, faults: MinerBehaviour): BucketBody {
    let entities = this.store.bucket(bucketId);
    if (faults.partial) entities = entities.filter((entity) => this.keeps(entity.uri));
    if (faults.fabricate) {
      entities = fabricateEntities(this.contentRng, entities, bucketId, this.options.templates);
    }
    return { data_entities: faults.wrongSchema ? entities.map(corruptEntity) : entities };
  }

  private streamOversize(response: ServerResponse, endpoint: MinerEndpoint): Promise<void> {
    const sample = this.options.items[0] ?? this.options.templates[0];
    if (endpoint === 'GetMinerIndex' || !sample) {
      const ids = Array.from({ length: 24 }, (_, offset) => 480_000 + offset);
      const buckets = `"time_bucket_ids":[${ids.join(',')}],"sizes_bytes":[${ids.map(() => 4096).join(',')}]`;
      const element = (index: number): string => `{"label":"#oversize_${index}",${buckets}}`;
      return streamJsonArray(response, '{"sources":{"2":[', element, ']}}', OVERSIZE_BYTES);
    }
    // Every element a copy of a real item under a distinct uri: looks like a legitimate answer.
    const marker = '\u0000';
    const template =
      endpoint === 'OnDemandRequest'
        ? JSON.stringify({ ...sample, uri: marker })
        : JSON.stringify({ ...toEntity(sample), uri: marker });
    const [head, tail] = template.split(JSON.stringify(marker));
    const element = (index: number): string => `${head}"${sample.uri}?copy=${index}"${tail}`;
    const prefix = endpoint === 'OnDemandRequest' ? '{"data":[' : '{"data_entities":[';
    return streamJsonArray(response, prefix, element, ']}', OVERSIZE_BYTES);
  }
}
