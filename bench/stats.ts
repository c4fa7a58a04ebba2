/**
 * The stats endpoints (top labels, ages, bytes by label) of the real service over a miner index
 * of 20 M rows (250 miners × 80 k buckets), beside the original's GROUP BY over that index, and
 * the rate at which the project's own ingest path (the GetMinerIndex answer parsed, its
 * `compressed_index_serialized` string parsed, parseCompressedIndex + replaceMinerIndex, as the
 * index sync job does) loads it. Targets: p99 ≤ 20 ms, ≥ 100× faster than the GROUP BY,
 * ingest ≥ 300 k rows/s. Then query_bucket's holder lookup (MinerIndexReadRepository.holders), with
 * and without a label, beside the old query without one (bench/support/holder-lookup.ts).
 * Run: npm run bench:stats [-- --miners 250 --buckets 80000 --labels 5000 --concurrency 1,2,4
 *   --resync 10 --requests 500 --baseline-runs 5 --seed 42] (or BENCH_STATS_MINERS,
 *   BENCH_STATS_BUCKETS, BENCH_STATS_LABELS, BENCH_STATS_CONCURRENCY, BENCH_STATS_RESYNC,
 *   BENCH_STATS_REQUESTS, BENCH_STATS_BASELINE_RUNS, BENCH_STATS_SEED). The full run takes about
 *   7 minutes on 2 cores; quick run: --miners 20 --buckets 20000 (under a minute).
 * Always a throwaway database (on DATABASE_URL's server if set, else the local server, else an
 * embedded Postgres): the run replaces the index of miners 0..N-1. The service runs as a child of
 * this script (--serve-app). Its parts: support/stats-index.ts (the synthetic indexes),
 * stats-ingest.ts (the timed load), stats-database.ts (what the database holds after it),
 * stats-endpoints.ts (the endpoints, their GROUP BY and the timing of both),
 * stats-report.ts (the tables and targets).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../src/database/data-source-options';
import { runMigrations } from '../src/database/migrate';
import { writeMetagraphFile } from '../src/devnet/metagraph';
import { IndexLabelsRepository } from '../src/network/index/index-labels.repository';
import { IndexTotalsRepository } from '../src/network/index/index-totals.repository';
import { MinerIndexReadRepository } from '../src/network/index/miner-index-read.repository';
import { MinerIndexRepository } from '../src/network/index/miner-index.repository';
import { MinerIndexService } from '../src/network/index/miner-index.service';
import { MinersRepository } from '../src/network/miners.repository';
import { MAX_INDEX_BUCKETS, timeBucketId } from '../src/network/protocol';
import { benchAppEnv, createApiKey, serveApp } from './support/app-server';
import { forkServer } from './support/child-server';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase, LOCAL_SERVER_URL } from './support/database';
import { benchFlags } from './support/flags';
import { integerListSetting, integerSetting, percentile, settingText } from './support/measure';
import { formatInt, progress } from './support/report';
import { timeHolderLookups } from './support/holder-lookup';
import {
  capturing,
  EndpointResult,
  endpoints,
  HEALTH_PATH,
  measureEndpoint,
  timeHttp,
} from './support/stats-endpoints';
import { readDatabaseFacts } from './support/stats-database';
import { credibilityOf, HOURS, labelName, neuronOf } from './support/stats-index';
import { ingest, ingestBlock, instrument } from './support/stats-ingest';
import { report, StatsOptions, StatsRun } from './support/stats-report';

const text = { type: 'string' } as const;
const { values: flags } = benchFlags({
  options: {
    'serve-app': { type: 'boolean' },
    miners: text,
    buckets: text,
    labels: text,
    concurrency: text,
    resync: text,
    requests: text,
    'baseline-runs': text,
    seed: text,
  },
});
const options: StatsOptions = {
  miners: integerSetting('miners', flags.miners, 'BENCH_STATS_MINERS', 250),
  buckets: integerSetting('buckets', flags.buckets, 'BENCH_STATS_BUCKETS', 80_000),
  labels: integerSetting('labels', flags.labels, 'BENCH_STATS_LABELS', 5000),
  concurrency: integerListSetting(
    settingText('concurrency', flags.concurrency, 'BENCH_STATS_CONCURRENCY'),
    [1, 2, 4],
  ),
  /** Miners whose index is replaced once more after the load: the steady state of the sync. */
  resync: integerSetting('resync', flags.resync, 'BENCH_STATS_RESYNC', 10, true),
  requests: integerSetting('requests', flags.requests, 'BENCH_STATS_REQUESTS', 500),
  baselineRuns: integerSetting(
    'baseline-runs',
    flags['baseline-runs'],
    'BENCH_STATS_BASELINE_RUNS',
    5,
  ),
  seed: integerSetting('seed', flags.seed, 'BENCH_STATS_SEED', 42),
};

async function benchmark(): Promise<StatsRun> {
  const cleanup = cleanupOnExit();
  const loadAverages = [os.loadavg()[0]];
  try {
    // Never the DATABASE_URL database itself: 20 M rows and miners 0..N-1 would be overwritten.
    const server = process.env.DATABASE_URL ?? LOCAL_SERVER_URL;
    const database = await acquireDatabase('bench_stats', { DATABASE_URL: '' }, server);
    cleanup.push(database.release);
    progress(`database: ${database.description}`);

    const maxConcurrency = Math.max(...options.concurrency);
    const dataSource = new DataSource(
      buildDataSourceOptions(database.url, { poolSize: maxConcurrency + 2 }),
    );
    await dataSource.initialize();
    cleanup.push(() =>
      Promise.race([dataSource.destroy(), sleep(3000, undefined, { ref: false })]),
    );
    const client = new Client({ connectionString: database.url });
    await client.connect();
    cleanup.push(() => Promise.race([client.end(), sleep(3000, undefined, { ref: false })]));
    await runMigrations(dataSource);

    progress(`miners: registering ${options.miners} with syncNeurons`);
    const uids = Array.from({ length: options.miners }, (_, uid) => uid);
    const totals = new IndexTotalsRepository();
    const labels = new IndexLabelsRepository(dataSource, totals);
    const repository = new MinerIndexRepository(dataSource, totals, labels);
    const index = new MinerIndexService(
      repository,
      totals,
      new MinerIndexReadRepository(dataSource),
      labels,
    );
    await new MinersRepository(dataSource, index).syncNeurons(
      uids.map((uid) => neuronOf(uid, options.miners)),
    );
    // Before any index row exists, so the aggregates are weighted right from the first replace.
    await dataSource.query(
      'UPDATE miners m SET credibility = c.value FROM unnest($1::int[], $2::float8[]) AS c(uid, value) WHERE m.uid = c.uid',
      [uids, uids.map((uid) => credibilityOf(options.seed, uid))],
    );

    const now = new Date();
    progress(
      `ingest: ${options.miners} miners × ${formatInt(options.buckets)} buckets, ` +
        `concurrency ${options.concurrency.join(',')} in interleaved blocks`,
    );
    const instrumented = instrument(repository, totals, labels);
    const load = await ingest(repository, options, options.concurrency, now);
    // Steady state: the next sync replaces indexes that exist (DELETE of the old rows, deltas
    // that subtract as well as add), one miner at a time.
    const resyncUids = Array.from(
      { length: Math.min(options.resync, options.miners) },
      (_, i) => i,
    );
    const resync =
      resyncUids.length > 0
        ? await ingestBlock(repository, options, resyncUids, 1, now, 'resync')
        : undefined;
    loadAverages.push(os.loadavg()[0]);
    if (resync) {
      progress(
        `re-sync: ${resyncUids.length} miners, ${formatInt(resync.rows)} rows in ` +
          `${resync.seconds.toFixed(1)} s = ${formatInt(resync.rows / resync.seconds)} rows/s`,
      );
    }
    const facts = await readDatabaseFacts(client);

    const { env, masterKey } = benchAppEnv(database.url);
    // The metagraph lists the miners loaded above, and no index sync touches the loaded data
    // (none at start, the next one a day later).
    const metagraphFile = join(tmpdir(), `bench-stats-metagraph-${process.pid}.json`);
    await writeMetagraphFile(metagraphFile, {
      netuid: 13,
      block: 0,
      updated_at: new Date().toISOString(),
      neurons: Array.from({ length: options.miners }, (_, uid) => neuronOf(uid, options.miners)),
    });
    cleanup.push(() => rm(metagraphFile, { force: true }));
    Object.assign(env, {
      METAGRAPH_FILE: metagraphFile,
      INDEX_SYNC_ON_START: 'false',
      INDEX_SYNC_INTERVAL: '86400',
    });
    const app = await forkServer(__filename, ['--serve-app'], env, 60_000);
    cleanup.push(app.stop);
    const key = await createApiKey(app.url, masterKey, 'bench-stats', 'validator');

    const popular = labelName(2, 0);
    const rare = labelName(1, options.labels - 1);
    const results: EndpointResult[] = [];
    const captured = capturing(dataSource);
    const { stats, last } = captured;
    const timing = {
      app: { url: app.url, key: key.key, pid: app.child.pid },
      client,
      captured,
      requests: options.requests,
      baselineRuns: options.baselineRuns,
    };
    // Control: the same pipeline (key check, throttler) answering a small cached body. Its p99 is
    // the floor this machine allows right now, whatever the stats endpoints do.
    progress(`control ${HEALTH_PATH}: ${options.requests} sequential requests over HTTP`);
    const control = await timeHttp(
      `${app.url}${HEALTH_PATH}`,
      key.key,
      options.requests,
      app.child.pid,
    );
    for (const endpoint of endpoints(popular, rare)) {
      progress(
        `${endpoint.name}: ${options.requests} sequential requests over HTTP, then the ` +
          `GROUP BY (EXPLAIN ANALYZE as warm-up + ${options.baselineRuns} runs)`,
      );
      const result = await measureEndpoint(endpoint, timing);
      results.push(result);
      loadAverages.push(os.loadavg()[0]);
      progress(
        `${endpoint.name}: ours p50 ${percentile(result.http.times, 0.5).toFixed(2)} ms, ` +
          `GROUP BY p50 ${percentile(result.baseline, 0.5).toFixed(0)} ms` +
          (result.mismatch ? `, MISMATCH ${result.mismatch}` : ''),
      );
    }
    progress(
      `query_bucket holder lookups: ours ${options.requests} runs each, old query ${options.baselineRuns}`,
    );
    const hour = timeBucketId(now) - 1;
    const holderLookups = await timeHolderLookups(
      client,
      stats,
      last,
      [
        { name: 'x, no label, last complete hour', source: 2, labelId: undefined, hour },
        { name: 'reddit, no label, 300 h back', source: 1, labelId: undefined, hour: hour - 299 },
        {
          name: `x, ${popular}, last complete hour`,
          source: 2,
          labelId: await stats.labelId(popular),
          hour,
        },
      ],
      options.requests,
      options.baselineRuns,
    );
    return {
      load,
      instrumented,
      holderLookups,
      resync,
      loadAverages,
      ...facts,
      results,
      control,
      env,
      database: database.description,
    };
  } finally {
    await cleanup.run();
  }
}

async function main(): Promise<void> {
  if (flags['serve-app']) return serveApp();
  // Each source gets about half the buckets; keeping them under half its (label, hour) slots
  // keeps the distinct-bucket sampling fast.
  const capacity = Math.min(MAX_INDEX_BUCKETS, options.labels * HOURS);
  if (options.buckets > capacity) {
    throw new Error(
      `--buckets ${options.buckets}: at most ${capacity} (${MAX_INDEX_BUCKETS} per index, ` +
        `labels × ${HOURS} hours)`,
    );
  }
  const result = await benchmark();
  const ok = report(result, options);
  // Explicit exit: a lingering handle (pg pool, keep-alive socket) must not hang the run.
  process.exit(ok ? 0 : 1);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:stats failed: ${message}\n`);
  process.exit(1);
});
