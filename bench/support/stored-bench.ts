/**
 * `npm run bench:on-demand -- --stored`: on-demand from miners' stored data (ON_DEMAND_MODE=stored)
 * on the real service over HTTP on loopback, against a throwaway Postgres whose item store holds
 * N seeded items (default 10 million, seeded once per run) and a --stored-only devnet whose
 * miners have fixed latencies.
 * - Store hits: hot-label queries whose buckets are fresh in the store (no miner may be called),
 *   one at a time and a few in flight, beside ItemStore.find alone. Target: p99 ≤ 50 ms.
 * - First fetches: queries none of whose buckets the store holds, one at a time, each timed
 *   against the slowest miner it called (GetContentsByBuckets timed directly). Target: p99 ≤
 *   that miner's latency + 50 ms.
 * Both print the miner calls per query, from the devnet's counters.
 * Run: npm run bench:on-demand -- --stored [--items 200000 --latencies 50,150,300
 *   --requests 1000 --warmup 50 --concurrency 4 --first-fetches 200 --direct 30]
 *   (or BENCH_ITEMS, BENCH_LATENCIES, BENCH_REQUESTS, BENCH_WARMUP_REQUESTS, BENCH_CONCURRENCY,
 *   BENCH_FIRST_FETCHES, BENCH_DIRECT_REQUESTS).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { SYNAPSE_NAMES } from '../../src/common/synapse-names';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { runMigrations } from '../../src/database/migrate';
import { callAxon } from '../../src/devnet/axon-client';
import { MinerBehaviour } from '../../src/devnet/behaviour';
import { CorpusSize } from '../../src/devnet/corpus';
import { CallCounts } from '../../src/devnet/miner-server';
import { cryptoReady, Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { timeBucketId } from '../../src/network/protocol';
import { getContentsByBucketsFields, readBucketContents } from '../../src/network/sn13/messages';
import { toSourceId } from '../../src/network/sources';
import { benchAppEnv, benchValidatorKey, createApiKey, deactivateApiKey } from './app-server';
import { forkServer } from './child-server';
import { cleanupOnExit } from './cleanup';
import { acquireDatabase } from './database';
import { DevnetAxon, forkDevnet } from './devnet-server';
import { seedItemStore } from './item-store-seed';
import { integerListSetting, numberSetting, percentile, settingText, trackUsage } from './measure';
import { formatInt, progress } from './report';
import { FIRST_FETCH_LABELS, QueryBody, seedFreshFetches } from './stored-queries';
import { Answer, measureFirstFetches, measureStoreHits } from './stored-phases';

const PATH = '/api/v1/on_demand_data_request';
/** Ten times the devnet's default: a first fetch of a day of one label carries tens of items. */
export const CORPUS: CorpusSize = { x: 30_000, reddit: 20_000 };
/**
 * A first fetch per query and miner: the default budgets (8 GetContentsByBuckets an hour beside
 * a validator) would refuse all but the first few. Printed in the report.
 */
export const BENCH_BUDGETS = 'GetContentsByBuckets=1000000/h';
const UNTIMED = 3;

export interface StoredFlags {
  items?: string;
  latencies?: string;
  requests?: string;
  warmup?: string;
  concurrency?: string;
  'first-fetches'?: string;
  direct?: string;
}

export type StoredOptions = ReturnType<typeof storedOptions>;

export function storedOptions(flags: StoredFlags, env: NodeJS.ProcessEnv = process.env) {
  const text = (flag: keyof StoredFlags, variable: string) =>
    settingText(flag, flags[flag], variable, env);
  const setting = (flag: keyof StoredFlags, variable: string, fallback: number): number =>
    numberSetting(text(flag, variable), fallback, true);
  return {
    items: setting('items', 'BENCH_ITEMS', 10_000_000),
    latencies: integerListSetting(text('latencies', 'BENCH_LATENCIES'), [50, 150, 300], true),
    requests: setting('requests', 'BENCH_REQUESTS', 1000),
    warmup: setting('warmup', 'BENCH_WARMUP_REQUESTS', 50),
    concurrency: setting('concurrency', 'BENCH_CONCURRENCY', 4),
    firstFetches: setting('first-fetches', 'BENCH_FIRST_FETCHES', 200),
    direct: setting('direct', 'BENCH_DIRECT_REQUESTS', 30),
  };
}

/** Runs the benchmark and returns what the report needs; cleans up before returning or failing. */
export async function storedBenchmark(script: string, options: StoredOptions) {
  const cleanup = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_on_demand_stored');
    cleanup.push(database.release);
    if (database.persistent)
      throw new Error('--stored seeds a throwaway database: unset DATABASE_URL');
    const dataSource = new DataSource(
      buildDataSourceOptions(database.url, { poolSize: 4, statementTimeoutMs: 0 }),
    );
    cleanup.push(async () => void (dataSource.isInitialized && (await dataSource.destroy())));
    await dataSource.initialize();
    await runMigrations(dataSource);
    progress(`seeding ${formatInt(options.items)} items into ${database.description}`);
    const seeded = await seedItemStore(dataSource, { items: options.items, now: new Date() });
    const storeSize = await sizeOfStore(dataSource);

    await cryptoReady();
    const signer = benchValidatorKey();
    const behaviours: MinerBehaviour[] = options.latencies.map((latencyMs) => ({
      latencyMs,
      strictBudget: false,
    }));
    const devnet = await forkDevnet(script, '--serve-devnet', behaviours, [signer.address], {
      storedOnly: true,
      corpusSize: CORPUS,
    });
    cleanup.push(devnet.stop);
    progress(`direct: ${options.direct} GetContentsByBuckets calls to each miner, one at a time`);
    const direct = await Promise.all(
      devnet.axons.map((axon) => timeContentsCalls(axon, signer, options.direct)),
    );

    const { env, masterKey } = benchAppEnv(database.url);
    Object.assign(env, {
      METAGRAPH_FILE: devnet.metagraphFile,
      DEVNET_MINERS: '0',
      ON_DEMAND_MODE: 'stored',
      QUERY_CACHE_TTL_SECONDS: '0',
      INDEX_SYNC_ON_START: 'true',
      // Spot checks would call GetDataEntityBucket beside the queries' calls being counted.
      INDEX_SPOT_CHECKS: '0',
      MINER_CALL_BUDGETS: BENCH_BUDGETS,
    });
    const app = await forkServer(script, ['--serve-app'], env, 120_000);
    cleanup.push(app.stop);
    const key = await createApiKey(app.url, masterKey, 'bench-on-demand-stored', 'validator');
    if (database.persistent) cleanup.push(() => deactivateApiKey(app.url, masterKey, key.id));
    progress('waiting for the index sync');
    await waitForIndexSync(app.url, masterKey);
    const freshFetches = await seedFreshFetches(dataSource);
    const send = (body: QueryBody) => post(`${app.url}${PATH}`, key.key, body);

    const failures: string[] = [];
    const loads = [os.loadavg()[0]];
    const storeHits = await measureStoreHits(dataSource, devnet, send, options, failures);
    progress(`first fetches: ${options.firstFetches} queries, one at a time`);
    const usage = trackUsage([app.child.pid, devnet.child.pid]);
    const firstFetches = await measureFirstFetches(devnet, send, options, failures);
    const used = usage();
    loads.push(os.loadavg()[0]);
    const refused = (await devnet.callCounts()).reduce((sum, counts) => sum + refusals(counts), 0);
    return {
      options,
      env,
      database: database.description,
      seeded,
      storeSize,
      freshFetches,
      behaviours,
      direct,
      storeHits,
      firstFetches,
      refused,
      used,
      loads,
      failures,
    };
  } finally {
    await cleanup.run();
  }
}

export type StoredResult = Awaited<ReturnType<typeof storedBenchmark>>;

/** One query, timed until its whole answer is read; a transport or parse error is reported. */
export async function post(
  url: string,
  apiKey: string,
  body: QueryBody,
): Promise<{ ms: number; answer?: Answer; error?: string }> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    if (response.status !== 200)
      return { ms, error: `HTTP ${response.status} ${text.slice(0, 300)}` };
    return { ms, answer: JSON.parse(text) as Answer };
  } catch (error) {
    return { ms: performance.now() - started, error: String(error) };
  }
}

/**
 * A miner's own latency for the kind of call a first fetch makes: GetContentsByBuckets for a
 * day of a first-fetch label (its answer read as the gateway reads it), signed by the gateway's
 * key, one at a time after UNTIMED untimed calls.
 */
export async function timeContentsCalls(axon: DevnetAxon, signer: Sr25519Keypair, count: number) {
  const { source, label } = FIRST_FETCH_LABELS[0];
  const last = timeBucketId(new Date()) - 24;
  const buckets = Array.from({ length: 24 }, (_, hour) => ({
    source: toSourceId(source),
    label,
    timeBucket: last - hour,
  }));
  const fields = getContentsByBucketsFields(buckets);
  const times: number[] = [];
  for (let index = 0; index < UNTIMED + count; index++) {
    const started = performance.now();
    const answer = await callAxon({
      ...axon,
      synapse: 'GetContentsByBuckets',
      fields: { ...fields },
      signer,
      timeoutSeconds: 10,
    });
    if (answer.status !== 200) throw new Error(`${axon.url}: ${answer.status} ${answer.text}`);
    readBucketContents(answer.body);
    if (index >= UNTIMED) times.push(performance.now() - started);
  }
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/** Polls the service's metrics until its first index sync has completed. */
export async function waitForIndexSync(url: string, masterKey: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const metrics = await fetch(`${url}/metrics`, { headers: { 'X-API-Key': masterKey } });
    const text = await metrics.text();
    const last = /^gateway_index_sync_last_completed_timestamp_seconds (\S+)/m.exec(text)?.[1];
    if (last !== undefined && Number(last) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`no index sync within ${timeoutMs} ms`);
}

async function sizeOfStore(dataSource: DataSource): Promise<string> {
  const [{ size }] = await dataSource.query<{ size: string }[]>(
    `SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) AS size
     FROM pg_inherits WHERE inhparent = 'stored_items'::regclass`,
  );
  return size;
}

function refusals(counts: CallCounts): number {
  return SYNAPSE_NAMES.reduce((sum, synapse) => sum + counts[synapse].refused, 0);
}
