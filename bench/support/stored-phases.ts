import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { SYNAPSE_NAMES, SynapseName } from '../../src/common/synapse-names';
import { CallCounts } from '../../src/devnet/miner-server';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { DevnetChild } from './devnet-server';
import { runPool } from './measure';
import { progress } from './report';
import { FIRST_FETCH_LABELS, firstFetchQuery, QueryBody, storeHitQuery } from './stored-queries';

// The two measured phases of `npm run bench:on-demand -- --stored` (stored-bench.ts runs them):
// store hits and first fetches, each answer checked for what the phase is about, and the miner
// calls each made, from the devnet's counters.

/** The fields of an answer read here (see DataQueryResponseDto). */
export interface Answer {
  status: string;
  data: unknown[];
  meta: {
    origin: string;
    cache_hit: boolean;
    processing_time_ms: number;
    miners_queried: number;
    stored: {
      buckets_planned: number;
      buckets_from_store: number;
      buckets_fetched_now: number;
      buckets_missing: number;
    } | null;
  };
}

export interface StoreHitSample {
  ms: number;
  range: string;
  answer: Answer;
}

export interface FirstFetchSample {
  ms: number;
  label: string;
  answer: Answer;
  /** Calls each miner (by uid) received during the query, by synapse. */
  calls: Record<SynapseName, number>[];
}

export interface Phase<T> {
  samples: T[];
  seconds: number;
}

/** One query, timed until its whole answer is read (stored-bench.ts, post). */
export type Send = (body: QueryBody) => Promise<{ ms: number; answer?: Answer; error?: string }>;

/** What the phases read of the bench's settings (StoredOptions). */
export interface PhaseOptions {
  requests: number;
  warmup: number;
  concurrency: number;
  firstFetches: number;
}

/**
 * Store hits, after a warm-up: ItemStore.find alone for the same questions (the floor), then the
 * endpoint one at a time and `concurrency` in flight; the devnet's counters before and after
 * (warm-up included) say whether any miner was called.
 */
export async function measureStoreHits(
  dataSource: DataSource,
  devnet: DevnetChild,
  send: Send,
  options: PhaseOptions,
  failures: string[],
) {
  const before = await devnet.callCounts();
  const now = () => new Date();
  const store = new ItemStoreRepository(dataSource);
  progress(`store hits: ${options.requests} reads of ItemStore.find alone`);
  const floor: number[] = [];
  for (let index = 0; index < options.warmup + options.requests; index++) {
    const { find } = storeHitQuery(index, now(), Math.random());
    const started = performance.now();
    await store.find(find);
    if (index >= options.warmup) floor.push(performance.now() - started);
  }
  const run = async (count: number, concurrency: number): Promise<Phase<StoreHitSample>> => {
    const samples: StoreHitSample[] = [];
    const start = performance.now();
    await runPool(count, concurrency, async (index) => {
      const query = storeHitQuery(index, now(), Math.random());
      const { ms, answer, error } = await send(query.body);
      const problem = error ?? storeHitProblem(answer!);
      if (problem) failures.push(`store hit ${JSON.stringify(query.body)}: ${problem}`);
      else samples.push({ ms, range: query.range, answer: answer! });
    });
    return { samples, seconds: (performance.now() - start) / 1000 };
  };
  progress(`store hits: ${options.warmup} warm-up queries`);
  await run(options.warmup, 1);
  progress(`store hits: ${options.requests} queries one at a time`);
  const sequential = await run(options.requests, 1);
  progress(`store hits: ${options.requests} queries, ${options.concurrency} in flight`);
  const concurrent = await run(options.requests, options.concurrency);
  const calls = callsBetween(before, await devnet.callCounts());
  const queries = options.warmup * 2 + options.requests * 2;
  return { floor, sequential, concurrent, calls, queries };
}

function storeHitProblem(answer: Answer): string | undefined {
  const stored = answer.meta.stored;
  if (answer.status !== 'success') return `status ${answer.status}`;
  if (answer.meta.cache_hit) return 'a cache hit despite QUERY_CACHE_TTL_SECONDS=0';
  if (answer.meta.origin !== 'stored' || !stored) return `origin ${answer.meta.origin}`;
  if (stored.buckets_fetched_now > 0 || stored.buckets_missing > 0)
    return `not a store hit: ${JSON.stringify(stored)}`;
  if (answer.data.length === 0) return 'no item';
  return undefined;
}

/** First fetches one at a time, each with the calls it made (the devnet's counters around it). */
export async function measureFirstFetches(
  devnet: DevnetChild,
  send: Send,
  options: PhaseOptions,
  failures: string[],
): Promise<Phase<FirstFetchSample> & { nothingToFetch: number }> {
  const samples: FirstFetchSample[] = [];
  let nothingToFetch = 0;
  const start = performance.now();
  // Each day of each label is asked once: a query that planned no bucket is not a first fetch.
  for (let index = 0; samples.length < options.firstFetches; index++) {
    if (index >= 29 * FIRST_FETCH_LABELS.length)
      throw new Error(`only ${samples.length} of the ${index} first fetches found a bucket`);
    const { body, label } = firstFetchQuery(index, new Date());
    const before = await devnet.callCounts();
    const { ms, answer, error } = await send(body);
    const calls = callsBetween(before, await devnet.callCounts());
    const stored = answer?.meta.stored;
    if (error || !answer || !stored || answer.meta.origin !== 'stored') {
      failures.push(`first fetch ${JSON.stringify(body)}: ${error ?? JSON.stringify(answer)}`);
      continue;
    }
    if (stored.buckets_planned === 0) {
      nothingToFetch++;
      continue;
    }
    if (stored.buckets_from_store > 0)
      failures.push(`first fetch ${label}: ${stored.buckets_from_store} buckets from the store`);
    if (!calls.some((counts) => counts.GetContentsByBuckets + counts.GetDataEntityBucket > 0)) {
      failures.push(`first fetch ${label}: ${stored.buckets_planned} buckets, no miner called`);
      continue;
    }
    samples.push({ ms, label, answer, calls });
  }
  return { samples, seconds: (performance.now() - start) / 1000, nothingToFetch };
}

/** Calls per miner and synapse between two readings of the devnet's counters. */
export function callsBetween(
  before: CallCounts[],
  after: CallCounts[],
): Record<SynapseName, number>[] {
  return after.map(
    (counts, uid) =>
      Object.fromEntries(
        SYNAPSE_NAMES.map((synapse) => [
          synapse,
          counts[synapse].calls - before[uid][synapse].calls,
        ]),
      ) as Record<SynapseName, number>,
  );
}
