/**
 * Latency of POST /api/v1/on_demand_data_request on the real service, over a devnet of miners
 * with fixed latencies plus hanging ones, beside the miner the quorum has to wait for: the Q-th
 * fastest healthy one, timed directly. Target: p99 ≤ that miner's latency + 50 ms.
 * With --active-tasks N, the queries are measured a second time after N scraping tasks were
 * registered and are being collected (TASK_COLLECT_INTERVAL 60 s: every task always due, so
 * collection runs at its full budget throughout): users' queries must still meet the target.
 * Run: npm run bench:on-demand [-- --latencies 40,80,120,160 --hung 1 --requests 300
 *   --warmup 30 --concurrency 4 --direct 30 --active-tasks 10000] (or BENCH_LATENCIES, BENCH_HUNG,
 *   BENCH_REQUESTS, BENCH_WARMUP_REQUESTS, BENCH_CONCURRENCY, BENCH_DIRECT_REQUESTS,
 *   BENCH_ACTIVE_TASKS).
 * The service and the devnet run as children of this script (--serve-app, --serve-devnet).
 * With --stored: on-demand from miners' stored data instead, store hits at 10 million stored
 * items and first fetches (see support/stored-bench.ts for its flags).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchFlags } from './support/flags';
import { loadConfig } from '../src/config/load-config';
import { MinerBehaviour } from '../src/devnet/behaviour';
import { cryptoReady } from '../src/network/bittensor/keypair';
import { onDemandRequestFields, OnDemandRequestFields } from '../src/network/sn13/messages';
import {
  benchAppEnv,
  benchValidatorKey,
  createApiKey,
  deactivateApiKey,
  serveApp,
} from './support/app-server';
import { forkServer } from './support/child-server';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase } from './support/database';
import { forkDevnet, serveDevnet, timeMinerCalls, timeQuorum } from './support/devnet-server';
import {
  integerListSetting,
  integerSetting,
  percentile,
  runPool,
  settingText,
  trackUsage,
} from './support/measure';
import { progress } from './support/report';
import {
  ON_DEMAND_PATH,
  OnDemandOptions,
  OnDemandRun,
  QUERY_KEYWORDS,
  QueryRun,
  QueryMeta,
  report,
  Sample,
  UNTIMED,
} from './support/on-demand-report';
import { storedBenchmark, storedOptions } from './support/stored-bench';
import { storedReport } from './support/stored-report';

const text = { type: 'string' } as const;
const { values: flags } = benchFlags({
  options: {
    'serve-app': { type: 'boolean' },
    'serve-devnet': { type: 'boolean' },
    latencies: text,
    hung: text,
    requests: text,
    warmup: text,
    concurrency: text,
    direct: text,
    'active-tasks': text,
    stored: { type: 'boolean' },
    items: text,
    'first-fetches': text,
  },
});
const options: OnDemandOptions = {
  // Fixed, not ranges: the latency of the miner completing the quorum is then known exactly.
  latencies: integerListSetting(
    settingText('latencies', flags.latencies, 'BENCH_LATENCIES'),
    [40, 80, 120, 160],
    true,
  ),
  hung: integerSetting('hung', flags.hung, 'BENCH_HUNG', 1, true),
  requests: integerSetting('requests', flags.requests, 'BENCH_REQUESTS', 300),
  warmup: integerSetting('warmup', flags.warmup, 'BENCH_WARMUP_REQUESTS', 30),
  concurrency: integerSetting('concurrency', flags.concurrency, 'BENCH_CONCURRENCY', 4),
  direct: integerSetting('direct', flags.direct, 'BENCH_DIRECT_REQUESTS', 30),
  activeTasks: integerSetting('active-tasks', flags['active-tasks'], 'BENCH_ACTIVE_TASKS', 0, true),
};
/** Seconds between two collection passes while tasks are active (a pass spreads over it). */
const TASK_TICK_S = 10;

/** What the gateway sends each miner for `{source: "x", keywords: [keyword], limit: 100}`. */
const minerRequest = (index: number): OnDemandRequestFields =>
  onDemandRequestFields({
    source: 'x',
    usernames: [],
    keywords: [QUERY_KEYWORDS[index % QUERY_KEYWORDS.length]],
    keywordMode: 'all',
    startDate: null,
    endDate: new Date(),
    limit: 100,
  });

/**
 * `count` queries, `options.concurrency` in flight, each timed alone (exact percentiles, meta
 * kept), rotating keywords. A bad answer goes to `failures` rather than throwing, to be counted;
 * an answer shared with an identical query in flight is counted apart.
 */
async function query(
  url: string,
  apiKey: string,
  count: number,
  failures: string[],
): Promise<QueryRun> {
  const samples: Sample[] = [];
  let shared = 0;
  const start = performance.now();
  await runPool(count, options.concurrency, async (index) => {
    const keyword = QUERY_KEYWORDS[index % QUERY_KEYWORDS.length];
    const started = performance.now();
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ source: 'x', keywords: [keyword], limit: 100 }),
      });
      const body = await response.text();
      const ms = performance.now() - started;
      const answer = JSON.parse(body) as { status?: string; data?: unknown[]; meta?: QueryMeta };
      const { status, data, meta } = answer;
      if (response.status !== 200 || status !== 'success' || !meta || !data?.length) {
        failures.push(`${keyword}: HTTP ${response.status} ${body.slice(0, 300)}`);
      } else if (meta.cache_hit) {
        // With the cache off, only an identical query still in flight answers it (a slow one
        // overtaken by the keywords' rotation): it made no call of its own, so it is no sample.
        shared += 1;
      } else samples.push({ ms, at: (started - start) / 1000, meta });
    } catch (error) {
      failures.push(`${keyword}: ${String(error)}`);
    }
  });
  if (shared > 0) progress(`${shared} answers shared an identical query in flight: not timed`);
  return { samples, seconds: (performance.now() - start) / 1000 };
}

/**
 * Registers `options.activeTasks` tasks (256 jobs per submission), waits for the collection to
 * be under way, and measures the queries again; counts the collections and miner calls meanwhile.
 */
async function measureWithTasks(
  url: string,
  apiKey: string,
  masterKey: string,
  devnet: Awaited<ReturnType<typeof forkDevnet>>,
  failures: string[],
) {
  progress(`registering ${options.activeTasks} scraping tasks`);
  for (let first = 0; first < options.activeTasks; first += 256) {
    const count = Math.min(256, options.activeTasks - first);
    const jobs = Array.from({ length: count }, (_, index) => ({
      id: `bench-task-${first + index}`,
      weight: 1 + ((first + index) % 7),
      params: {
        platform: 'x',
        label: QUERY_KEYWORDS[(first + index) % QUERY_KEYWORDS.length],
        // A window of its own (starting long before the devnet's data) for each: jobs with the
        // same params are one task, and a submission may not repeat them.
        post_start_datetime: new Date(Date.UTC(2000, 0, 1) + (first + index) * 1000).toISOString(),
      },
    }));
    const response = await fetch(`${url}/api/v1/set_desirabilities`, {
      method: 'POST',
      headers: { 'X-API-Key': masterKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ desirabilities: jobs }),
    });
    if (response.status !== 200)
      throw new Error(`registering tasks: HTTP ${response.status} ${await response.text()}`);
  }
  progress(`waiting ${TASK_TICK_S + 2} s for the collection to start`);
  await new Promise((resolve) => setTimeout(resolve, (TASK_TICK_S + 2) * 1000));
  const collections = async () => {
    const answer = await fetch(`${url}/metrics`, { headers: { 'X-API-Key': masterKey } });
    return answer.text();
  };
  const before = await devnet.requestCounts();
  const metricsBefore = await collections();
  progress(`measured with ${options.activeTasks} active tasks: ${options.requests} queries`);
  const run = await query(`${url}${ON_DEMAND_PATH}`, apiKey, options.requests, failures);
  const after = await devnet.requestCounts();
  const metricsAfter = await collections();
  const calls = after.reduce(
    (sum, counts, uid) => sum + counts.OnDemandRequest - before[uid].OnDemandRequest,
    0,
  );
  return {
    ...run,
    minerCalls: calls,
    behind: /^gateway_tasks_collection_behind (\d+)/m.exec(metricsAfter)?.[1] ?? '?',
    behindBefore: /^gateway_tasks_collection_behind (\d+)/m.exec(metricsBefore)?.[1] ?? '?',
  };
}

/** Runs everything and returns what the report needs; cleans up before returning or failing. */
async function benchmark(): Promise<OnDemandRun> {
  const cleanup = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_on_demand');
    cleanup.push(database.release);
    const behaviours: MinerBehaviour[] = options.latencies.map((latencyMs) => ({ latencyMs }));
    for (let index = 0; index < options.hung; index += 1) behaviours.push({ hang: true });
    await cryptoReady();
    const signer = benchValidatorKey();
    const devnet = await forkDevnet(__filename, '--serve-devnet', behaviours, [signer.address]);
    cleanup.push(devnet.stop);
    const { env, masterKey } = benchAppEnv(database.url);
    // No cache: every query must reach the miners. DEVNET_MINERS=0: our devnet is the network.
    // No OnDemandRequest budget: its default (8 per miner an hour) would end the run after a few
    // dozen queries, and the devnet does not limit the synapse.
    Object.assign(env, {
      METAGRAPH_FILE: devnet.metagraphFile,
      QUERY_CACHE_TTL_SECONDS: '0',
      MINER_CALL_BUDGETS: 'OnDemandRequest=none',
    });
    env.DEVNET_MINERS = '0';
    // The index sync runs every 20 min, and at start unless told not to: at start it would
    // overlap the run (DB writes, CPU) and measure that job instead. Set it to 'true' to see.
    env.INDEX_SYNC_ON_START ??= 'false';
    if (options.activeTasks > 0)
      Object.assign(env, {
        DESIRABILITY_MAX_ACTIVE_TASKS: String(options.activeTasks + 1000),
        TASK_COLLECT_INTERVAL: '60',
        TASK_LIFECYCLE_TICK: String(TASK_TICK_S),
      });
    const { network, tasks: taskSettings } = loadConfig(env);

    progress(`direct: ${options.direct} calls to each healthy miner, one at a time`);
    const healthy = behaviours.flatMap((behaviour, uid) => (behaviour.hang ? [] : [uid]));
    const direct = await Promise.all(
      healthy.map(async (uid) => {
        const more = (timed: number): boolean => timed < options.direct;
        const times = await timeMinerCalls(devnet.axons[uid], signer, minerRequest, more, UNTIMED);
        return { uid, p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
      }),
    );
    const baseline = [...direct].sort((a, b) => a.p50 - b.p50)[network.quorum - 1];
    if (!baseline) throw new Error(`fewer healthy miners than QUERY_QUORUM=${network.quorum}`);
    progress(`ideal: ${options.requests} fan-outs straight to the healthy miners`);
    const { quorum } = network;
    const plan = { quorum, count: options.requests, concurrency: options.concurrency };
    const axons = healthy.map((uid) => devnet.axons[uid]);
    const ideal = await timeQuorum(axons, signer, minerRequest, plan);

    const app = await forkServer(__filename, ['--serve-app'], env, 60_000);
    cleanup.push(app.stop);
    const key = await createApiKey(app.url, masterKey, 'bench-on-demand', 'validator');
    if (database.persistent) cleanup.push(() => deactivateApiKey(app.url, masterKey, key.id));
    const failures: string[] = [];
    progress(`warm-up: ${options.warmup} queries (the gateway learns its p90 for hedging)`);
    await query(`${app.url}${ON_DEMAND_PATH}`, key.key, options.warmup, failures);

    progress(`measured: ${options.requests} queries, ${options.concurrency} in flight`);
    const countsBefore = await devnet.requestCounts();
    const loads = [os.loadavg()[0]];
    const usage = trackUsage([app.child.pid, devnet.child.pid]);
    const run = await query(`${app.url}${ON_DEMAND_PATH}`, key.key, options.requests, failures);
    const used = usage();
    loads.push(os.loadavg()[0]);
    if (run.samples.length === 0) throw new Error(`no successful query: ${failures[0] ?? ''}`);
    const calls = (await devnet.requestCounts()).map(
      (after, uid) => after.OnDemandRequest - countsBefore[uid].OnDemandRequest,
    );
    const withTasks =
      options.activeTasks > 0
        ? await measureWithTasks(app.url, key.key, masterKey, devnet, failures)
        : undefined;
    const context = { behaviours, direct, baseline, network, env, calls, used, loads, failures };
    return {
      ...run,
      ...context,
      ideal,
      withTasks,
      taskSettings,
      database: database.description,
    };
  } finally {
    await cleanup.run();
  }
}

async function main(): Promise<void> {
  if (flags['serve-app']) return serveApp();
  if (flags['serve-devnet']) return serveDevnet();
  if (flags.stored) {
    const stored = await storedBenchmark(__filename, storedOptions(flags));
    process.stdout.write(storedReport(stored));
    process.exit(stored.failures.length === 0 ? 0 : 1);
  }
  const result = await benchmark();
  process.stdout.write(report(result, options));
  // Explicit exit: a lingering handle (keep-alive socket, hung miner call) must not hang the run.
  process.exit(result.failures.length === 0 ? 0 : 1);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:on-demand failed: ${message}\n`);
  process.exit(1);
});
