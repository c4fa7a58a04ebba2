/**
 * Latency of POST /api/v1/on_demand_data_request on the real service, fanning out to a devnet of
 * miners with fixed latencies (one hanging), beside the latency of the miner the quorum has to
 * wait for (the Q-th fastest healthy one, measured directly). Target: p99 ≤ that + 50 ms.
 * Run: npm run bench:on-demand [-- --latencies 40,80,120,160 --hung 1 --requests 300
 *   --warmup 30 --concurrency 6 --direct 30] (or BENCH_LATENCIES, BENCH_HUNG, BENCH_REQUESTS,
 *   BENCH_WARMUP_REQUESTS, BENCH_CONCURRENCY, BENCH_DIRECT_REQUESTS).
 * The service runs as a child of this script (--serve-app); the devnet runs in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load-config';
import { describeBehaviour, MinerBehaviour } from '../src/devnet/behaviour';
import { startDevnet } from '../src/devnet/devnet';
import { HASHTAGS } from '../src/devnet/vocabulary';
import { OnDemandMinerRequest, VALIDATOR_HOTKEY_HEADER } from '../src/network/protocol';
import { compileQuery } from '../src/network/query-matcher';
import { benchAppEnv, createApiKey, deactivateApiKey, serveApp } from './support/app-server';
import { forkServer } from './support/child-server';
import { acquireDatabase } from './support/database';
import { numberSetting, percentile } from './support/measure';
import { commandLine, machineLine, progress, table } from './support/report';

const PATH = '/api/v1/on_demand_data_request';
/** The corpus' most popular hashtags (Zipf head): every one has items, so data must not be empty. */
const KEYWORDS = HASHTAGS.slice(0, 6).map(({ tag }) => tag);
const TARGET_MARGIN_MS = 50;

const { values: flags } = parseArgs({
  options: {
    'serve-app': { type: 'boolean' },
    latencies: { type: 'string' },
    hung: { type: 'string' },
    requests: { type: 'string' },
    warmup: { type: 'string' },
    concurrency: { type: 'string' },
    direct: { type: 'string' },
  },
});
const env = process.env;
const setting = (flag: string | undefined, name: string, fallback: number): number =>
  numberSetting(flag ?? env[name], name, fallback, true);
const options = {
  latencies: (flags.latencies ?? env.BENCH_LATENCIES ?? '40,80,120,160')
    .split(',')
    .map((text) => numberSetting(text.trim(), 'BENCH_LATENCIES', 0, true)),
  hung: setting(flags.hung, 'BENCH_HUNG', 1),
  requests: setting(flags.requests, 'BENCH_REQUESTS', 300),
  warmup: setting(flags.warmup, 'BENCH_WARMUP_REQUESTS', 30),
  concurrency: setting(flags.concurrency, 'BENCH_CONCURRENCY', 6),
  direct: setting(flags.direct, 'BENCH_DIRECT_REQUESTS', 30),
};

/** The fields of the endpoint's `meta` this benchmark reads (DataQueryResponseDto.meta). */
interface QueryMeta {
  miners_queried: number;
  miners_responded: number;
  miners_failed: { count: number; reasons: Record<string, number> };
  hedged_requests: number;
  deadline_reached: boolean;
  processing_time_ms: number;
  cache_hit: boolean;
}
interface Sample {
  ms: number;
  meta: QueryMeta;
}

/** The body the gateway sends a miner for `{source: "x", keywords: [keyword], limit: 100}`. */
function minerRequest(keyword: string): OnDemandMinerRequest {
  const endDate = new Date().toISOString();
  return {
    source: 'X',
    usernames: [],
    keywords: [keyword],
    start_date: null,
    end_date: endDate,
    limit: 100,
  };
}

/** Sequential calls (one in flight): the miner's own latency as a client of it sees it. */
async function timeMiner(url: string, hotkey: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    const response = await fetch(`${url}/OnDemandRequest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [VALIDATOR_HOTKEY_HEADER]: hotkey },
      body: JSON.stringify(minerRequest(KEYWORDS[index % KEYWORDS.length])),
    });
    const body = (await response.json()) as { data?: unknown };
    times.push(performance.now() - started);
    if (response.status !== 200 || !Array.isArray(body.data)) {
      throw new Error(`${url}: ${response.status}`);
    }
  }
  return times;
}

/**
 * `count` queries, `concurrency` in flight, each timed alone (so percentiles are exact, not a
 * histogram's), rotating keywords. Every response is checked; a failure is recorded, not thrown,
 * so that the run still reports how many there were.
 */
async function runQueries(
  url: string,
  apiKey: string,
  count: number,
  concurrency: number,
  popular: ReadonlySet<string>,
  failures: string[],
): Promise<Sample[]> {
  const samples: Sample[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const keyword = KEYWORDS[index % KEYWORDS.length];
      const started = performance.now();
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
          body: JSON.stringify({ source: 'x', keywords: [keyword], limit: 100 }),
        });
        const text = await response.text();
        const ms = performance.now() - started;
        const body = JSON.parse(text) as { status?: string; data?: unknown[]; meta?: QueryMeta };
        const empty = !Array.isArray(body.data) || (popular.has(keyword) && body.data.length === 0);
        if (response.status !== 200 || body.status !== 'success' || !body.meta || empty) {
          failures.push(`${keyword}: HTTP ${response.status} ${text.slice(0, 200)}`);
        } else if (body.meta.cache_hit) {
          failures.push(`${keyword}: served from the cache, QUERY_CACHE_TTL_SECONDS=0 ignored`);
        } else samples.push({ ms, meta: body.meta });
      } catch (error) {
        failures.push(`${keyword}: ${String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return samples;
}

/** `{value: count}` of one meta field over the run, e.g. `3×290 4×10`. */
function tally(values: readonly (string | number | boolean)[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
  const sorted = [...counts].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }));
  return sorted.map(([value, count]) => `${value}×${count}`).join(' ');
}

const ms = (value: number): string => value.toFixed(1);
const ordinal = (n: number): string =>
  `${n}${['th', 'st', 'nd', 'rd'][n % 10 > 3 || Math.floor(n / 10) === 1 ? 0 : n % 10]}`;

async function benchmark(): Promise<boolean> {
  const cleanups: Array<() => Promise<void>> = [];
  let cleaning: Promise<void> | undefined;
  // Reverse order: key, app, devnet (its hung sockets), then the database the app was using.
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      for (const step of cleanups.reverse()) {
        await step().catch((error: unknown) => progress(`cleanup failed: ${String(error)}`));
      }
    })());
  // Ctrl-C must not leave a throwaway database, a server child or listening miners behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    const database = await acquireDatabase('bench_on_demand');
    cleanups.push(database.release);
    const directory = mkdtempSync(join(tmpdir(), 'bench-on-demand-'));
    cleanups.push(() => Promise.resolve(rmSync(directory, { recursive: true, force: true })));
    const behaviours: MinerBehaviour[] = [
      ...options.latencies.map((latencyMs) => ({ latencyMs })),
      ...Array.from({ length: options.hung }, () => ({ hang: true })),
    ];
    const devnet = await startDevnet({
      miners: behaviours.map((behaviour) => ({ behaviour })),
      metagraphFile: join(directory, 'metagraph.json'),
    });
    cleanups.push(() => devnet.stop());
    const { env: appEnv, masterKey } = benchAppEnv(database.url);
    // No cache: every request must reach the miners. DEVNET_MINERS=0: only our devnet exists.
    Object.assign(appEnv, {
      METAGRAPH_FILE: devnet.metagraphFile ?? '',
      QUERY_CACHE_TTL_SECONDS: '0',
      DEVNET_MINERS: '0',
    });
    const { network, validatorHotkey } = loadConfig(appEnv);
    const healthy = devnet.miners.filter((miner) => !miner.behaviour.hang);
    if (healthy.length < network.quorum) throw new Error(`fewer healthy miners than the quorum`);
    const popular = new Set(
      KEYWORDS.filter((keyword) => {
        const matcher = compileQuery({ source: 'X', keywords: [keyword] });
        return healthy.some((miner) =>
          devnet.corpus.holdingsOf(miner.uid).some((item) => matcher.matches(item)),
        );
      }),
    );

    progress(`direct: ${options.direct} sequential calls to each healthy miner`);
    const direct = await Promise.all(
      healthy.map(async (miner) => {
        const times = await timeMiner(miner.url, validatorHotkey, options.direct);
        return { miner, p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
      }),
    );
    const baseline = [...direct].sort((a, b) => a.p50 - b.p50)[network.quorum - 1];

    const app = await forkServer(__filename, ['--serve-app'], appEnv, 60_000);
    cleanups.push(app.stop);
    const key = await createApiKey(app.url, masterKey, 'bench-on-demand', 'validator');
    if (database.persistent) cleanups.push(() => deactivateApiKey(app.url, masterKey, key.id));
    const url = `${app.url}${PATH}`;
    const failures: string[] = [];
    progress(`warm-up: ${options.warmup} queries (the gateway learns its p90 for hedging)`);
    await runQueries(url, key.key, options.warmup, options.concurrency, popular, failures);
    const callsBefore = devnet.miners.map((miner) => devnet.requestCounts(miner.uid));
    progress(`measured: ${options.requests} queries, ${options.concurrency} in flight`);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    const samples = await runQueries(
      url,
      key.key,
      options.requests,
      options.concurrency,
      popular,
      failures,
    );
    const seconds = (performance.now() - started) / 1000;
    loop.disable();
    if (samples.length === 0) throw new Error(`no successful query: ${failures[0] ?? ''}`);

    const times = samples.map((sample) => sample.ms);
    const p99 = percentile(times, 0.99);
    const met = p99 <= baseline.p50 + TARGET_MARGIN_MS;
    const calls = devnet.miners.map((miner, uid) => {
      const counts = devnet.requestCounts(miner.uid);
      return counts.OnDemandRequest - callsBefore[uid].OnDemandRequest;
    });
    const minerRows = [['miner', 'behaviour', 'direct p50 ms', 'direct p99 ms', 'calls in run']];
    for (const miner of devnet.miners) {
      const measured = direct.find((entry) => entry.miner.uid === miner.uid);
      const cells = measured ? [ms(measured.p50), ms(measured.p99)] : ['-', '-'];
      minerRows.push([`uid ${miner.uid}`, describeBehaviour(miner.behaviour), ...cells]);
      minerRows[minerRows.length - 1].push(String(calls[miner.uid]));
    }
    const reasons = samples.flatMap((sample) =>
      Object.entries(sample.meta.miners_failed.reasons).flatMap(([reason, count]) =>
        Array.from({ length: count }, () => reason),
      ),
    );
    const server = samples.map((sample) => sample.meta.processing_time_ms);
    const pct = (q: number): string => ms(percentile(times, q));
    const lines = [
      '',
      `POST ${PATH}: real service over a ${devnet.miners.length}-miner devnet on 127.0.0.1`,
      `command:  ${commandLine()}`,
      `machine:  ${machineLine()}`,
      `gateway:  QUERY_MINERS=${network.minersPerQuery} QUERY_QUORUM=${network.quorum} ` +
        `QUERY_DEADLINE_MS=${network.queryDeadlineMs} MINER_CONCURRENCY=${network.minerConcurrency}; ` +
        'QUERY_CACHE_TTL_SECONDS=0: no cache, every request goes to the miners',
      `          LOG_LEVEL=${appEnv.LOG_LEVEL} RATE_LIMIT_VALIDATOR=${appEnv.RATE_LIMIT_VALIDATOR} ` +
        `RATE_LIMIT_WINDOW_SECONDS=${appEnv.RATE_LIMIT_WINDOW_SECONDS} DEVNET_MINERS=0 (validator key)`,
      `load:     fetch, ${options.warmup} warm-up + ${options.requests} measured queries, ` +
        `${options.concurrency} in flight, source x, limit 100, keywords ${KEYWORDS.join(' ')}`,
      `database: ${database.description}`,
      '',
      table(minerRows),
      '',
      table([
        ['endpoint', 'requests', 'errors', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        [
          PATH,
          String(samples.length),
          String(failures.length),
          (samples.length / seconds).toFixed(1),
        ].concat([pct(0.5), pct(0.9), pct(0.99), ms(Math.max(...times))]),
      ]),
      '',
      `baseline: uid ${baseline.miner.uid}, the ${ordinal(network.quorum)}-fastest healthy miner ` +
        `(the quorum waits for it): direct p50 ${ms(baseline.p50)} ms, p99 ${ms(baseline.p99)} ms`,
      `p99 − baseline: ${ms(p99 - baseline.p50)} ms over its p50, ${ms(p99 - baseline.p99)} ms over its p99`,
      `target:   p99 ≤ baseline p50 + ${TARGET_MARGIN_MS} ms = ${ms(baseline.p50 + TARGET_MARGIN_MS)} ms: ` +
        `${met ? 'MET' : 'MISSED'} (p99 ${ms(p99)} ms)`,
      `meta:     miners_responded ${tally(samples.map((s) => s.meta.miners_responded))}; ` +
        `miners_queried ${tally(samples.map((s) => s.meta.miners_queried))}`,
      `          hedged_requests ${tally(samples.map((s) => s.meta.hedged_requests))}; ` +
        `deadline_reached ${tally(samples.map((s) => s.meta.deadline_reached))}`,
      `          miners_failed reasons ${tally(reasons) || 'none'}; processing_time_ms ` +
        `p50 ${percentile(server, 0.5)} p99 ${percentile(server, 0.99)}`,
      `client:   event-loop delay of this process (load + devnet) p99 ${ms(loop.percentile(99) / 1e6)} ms`,
      ...failures.slice(0, 5).map((failure) => `failure:  ${failure}`),
      '',
    ];
    process.stdout.write(lines.join('\n'));
    return failures.length === 0;
  } finally {
    await cleanup();
  }
}

async function main(): Promise<void> {
  if (flags['serve-app']) return serveApp();
  const ok = await benchmark();
  // Explicit exit: a lingering handle (keep-alive socket, hung miner call) must not hang the run.
  process.exit(ok ? 0 : 1);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:on-demand failed: ${message}\n`);
  process.exit(1);
});
