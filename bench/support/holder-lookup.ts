import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import {
  BucketHolder,
  MinerIndexReadRepository,
} from '../../src/network/index/miner-index-read.repository';
import { SourceId } from '../../src/network/sources';
import { percentile } from './measure';
import { table } from './report';

/** query_bucket considers this many holders (HOLDERS_CONSIDERED in the stats service). */
const HOLDERS = 10;

/**
 * query_bucket's holder lookup without a label as it was: each holder's largest bucket of the
 * hour looked up in its index partition, for every holder of the hour before the LIMIT. The
 * partition's index leads with the label, so each lookup reads the whole partition.
 */
const OLD_UNLABELED_SQL = `SELECT h.miner_uid AS uid, m.hotkey, m.axon_url, top.label_id, l.value AS label, top.content_size_bytes AS bytes
FROM miner_bucket_totals h
JOIN miners m ON m.uid = h.miner_uid
CROSS JOIN LATERAL (
  SELECT i.label_id, i.content_size_bytes FROM miner_index i
  WHERE i.miner_uid = h.miner_uid AND i.source = h.source AND i.time_bucket = h.time_bucket
  ORDER BY i.content_size_bytes DESC LIMIT 1) top
LEFT JOIN labels l ON l.id = top.label_id
WHERE h.source = $1 AND h.time_bucket = $2 AND m.state = 'active' AND m.axon_url IS NOT NULL
ORDER BY m.credibility DESC, m.uid LIMIT $3`;

export interface HolderLookupCase {
  name: string;
  source: SourceId;
  /** Undefined: without a label, the case the old query served. */
  labelId: number | undefined;
  hour: number;
}

export interface HolderLookupResult {
  lookup: HolderLookupCase;
  holders: number;
  ours: number[];
  /** Empty for a case with a label: its query did not change. */
  old: number[];
  mismatch: string | undefined;
  ourPlan: string[];
  oldPlan: string[];
}

/**
 * Times MinerIndexReadRepository.holders (the repository's SQL in-process, `runs` times after a few
 * untimed) and, without a label, the old query (`oldRuns` times after its EXPLAIN ANALYZE as
 * warm-up); the same holders must come back in the same order with the same claimed bytes (the
 * label may differ between equal sizes).
 */
export async function timeHolderLookups(
  client: Client,
  stats: MinerIndexReadRepository,
  lastSql: { sql: string; params: unknown[] },
  cases: readonly HolderLookupCase[],
  runs: number,
  oldRuns: number,
): Promise<HolderLookupResult[]> {
  const results: HolderLookupResult[] = [];
  for (const lookup of cases) {
    const call = () => stats.holders(lookup.source, lookup.labelId, lookup.hour, HOLDERS);
    for (let warm = 0; warm < 5; warm += 1) await call();
    const ours: number[] = [];
    let answer: BucketHolder[] = [];
    for (let run = 0; run < runs; run += 1) {
      const started = performance.now();
      answer = await call();
      ours.push(performance.now() - started);
    }
    const ourPlan = await explain(client, lastSql.sql, lastSql.params);
    const old: number[] = [];
    let oldPlan: string[] = [];
    let mismatch: string | undefined;
    if (lookup.labelId === undefined) {
      const params = [lookup.source, lookup.hour, HOLDERS];
      oldPlan = await explain(client, OLD_UNLABELED_SQL, params);
      let rows: { uid: number; bytes: string }[] = [];
      for (let run = 0; run < oldRuns; run += 1) {
        const started = performance.now();
        rows = (await client.query<{ uid: number; bytes: string }>(OLD_UNLABELED_SQL, params)).rows;
        old.push(performance.now() - started);
      }
      const theirs = rows.map((row) => `${row.uid}:${row.bytes}`).join(' ');
      const mine = answer.map((holder) => `${holder.uid}:${holder.bytes}`).join(' ');
      if (theirs !== mine) mismatch = `ours ${mine}; old ${theirs}`;
    }
    results.push({ lookup, holders: answer.length, ours, old, mismatch, ourPlan, oldPlan });
  }
  return results;
}

/** The side-by-side table, the answers' check and both plans of each case. */
export function holderLookupReport(results: readonly HolderLookupResult[]): string[] {
  const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(0));
  const p = (values: number[], q: number): string =>
    values.length > 0 ? ms(percentile(values, q)) : '-';
  const mismatches = results.filter((result) => result.mismatch);
  return [
    `QUERY_BUCKET HOLDER LOOKUP: MinerIndexReadRepository.holders(source, label, hour, ${HOLDERS}) in-process, ` +
      'vs the old query without a label (pg, EXPLAIN ANALYZE as warm-up)',
    '',
    table([
      ['lookup', 'holders', 'ours p50 ms', 'ours p99 ms', 'old p50 ms', 'old max ms', 'speed-up'],
      ...results.map((result) => [
        result.lookup.name,
        String(result.holders),
        p(result.ours, 0.5),
        p(result.ours, 0.99),
        p(result.old, 0.5),
        p(result.old, 1),
        result.old.length > 0
          ? `${(percentile(result.old, 0.5) / percentile(result.ours, 0.5)).toFixed(0)}×`
          : '-',
      ]),
    ]),
    `answers:  ${
      mismatches.length === 0
        ? 'the same holders in the same order with the same claimed bytes as the old query'
        : mismatches.map((result) => `${result.lookup.name}: ${result.mismatch}`).join('; ')
    }`,
    '',
    ...results.flatMap((result) => [
      `-- holders ${result.lookup.name}: ours`,
      ...result.ourPlan,
      ...(result.oldPlan.length > 0
        ? [`-- holders ${result.lookup.name}: old (warm-up run)`, ...result.oldPlan]
        : []),
      '',
    ]),
  ];
}

export function holderLookupsMatch(results: readonly HolderLookupResult[]): boolean {
  return results.every((result) => result.mismatch === undefined);
}

async function explain(client: Client, sql: string, params: unknown[]): Promise<string[]> {
  const result = await client.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
    params,
  );
  return result.rows.map((row) => row['QUERY PLAN']);
}
