import os from 'node:os';
import { SYNAPSE_NAMES, SynapseName } from '../../src/common/synapse-names';
import { describeBehaviour } from '../../src/devnet/behaviour';
import { percentile } from './measure';
import { commandLine, formatInt, formatPercent, machineLine, table, tally } from './report';
import { BENCH_BUDGETS, StoredResult } from './stored-bench';
import { FirstFetchSample, Phase } from './stored-phases';
import { RANGE_NAMES, STORE_HIT_LABELS } from './stored-queries';

const PATH = '/api/v1/on_demand_data_request';
const STORE_HIT_TARGET_MS = 50;
const MARGIN_MS = 50;

const ms = (value: number): string => value.toFixed(1);
const mean = (values: readonly number[]): string =>
  values.length === 0 ? '-' : (values.reduce((sum, v) => sum + v, 0) / values.length).toFixed(1);
const verdict = (met: boolean): string => (met ? 'MET' : 'MISSED');
const quantiles = (values: number[]): string[] =>
  [0.5, 0.9, 0.99, 1].map((q) => ms(percentile(values, q)));

/** The report of `bench:on-demand --stored`, on stdout. */
export function storedReport(result: StoredResult): string {
  const { options, env, seeded, storeHits } = result;
  const lines = [
    '',
    `POST ${PATH} from stored data (ON_DEMAND_MODE=stored): the real service over a ` +
      `${result.behaviours.length}-miner --stored-only devnet on 127.0.0.1`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}; load average ${result.loads.map((l) => l.toFixed(2)).join(' → ')}` +
      (result.loads[0] > os.cpus().length / 2 ? ' (a busy machine: expect noise)' : ''),
    `store:    ${formatInt(seeded.items)} items seeded in ${seeded.partitions} daily partitions ` +
      `(${result.storeSize} with indexes) in ${seeded.seconds.toFixed(0)} s; ${result.database}`,
    `gateway:  ON_DEMAND_MODE=stored QUERY_CACHE_TTL_SECONDS=0 (no response cache) ` +
      `QUERY_MINERS=${env.QUERY_MINERS ?? 5} QUERY_DEADLINE_MS=${env.QUERY_DEADLINE_MS ?? 10000} ` +
      `INDEX_SPOT_CHECKS=0 LOG_LEVEL=${env.LOG_LEVEL}, validator key`,
    `budgets:  MINER_CALL_BUDGETS=${BENCH_BUDGETS} (VALIDATOR_SHARES_HOTKEY=true otherwise): the ` +
      'default 8/h per miner would refuse all but the first few first fetches; the devnet miners',
    '          run without their strict budget (10/h) for the same reason',
    '',
    `Store hits: ${STORE_HIT_LABELS.map((l) => l.label).join(' ')} (limit 100), each hour the ` +
      `index lists fresh in the store (${formatInt(result.freshFetches)} fetch rows seeded)`,
    table([
      ['', 'requests', 'errors', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'p99 ≤ 50 ms'],
      [
        'ItemStore.find alone (the floor) *',
        String(storeHits.floor.length),
        '0',
        '-',
        ...quantiles(storeHits.floor),
        '',
      ],
      storeHitRow(`${PATH}, 1 at a time`, storeHits.sequential, options.requests, true),
      storeHitRow(
        `${PATH}, ${options.concurrency} in flight`,
        storeHits.concurrent,
        options.requests,
        false,
      ),
    ]),
    // The issue's target is the latency of a store hit; with several in flight on this 2-CPU
    // machine, the load generator, the service and Postgres queue behind each other, so that
    // row shows how the store holds up under concurrency, against the same 50 ms, for reference.
    `target:   the issue's store-hit p99 ≤ 50 ms is read on queries one at a time; the ` +
      `${options.concurrency}-in-flight row says only whether its p99 is under or over 50 ms`,
    '* the same questions read by the repository in the bench process (the answer page only: ' +
      'no index, fetch rows, HTTP)',
    `miner calls during the store hits (${formatInt(storeHits.queries)} queries, warm-ups ` +
      `included): ${callSummary(storeHits.calls)}`,
    '',
    table([
      ['by range (1 at a time)', 'requests', 'p50 ms', 'p99 ms', 'items', 'buckets from store'],
      ...RANGE_NAMES.map((range) => {
        const samples = storeHits.sequential.samples.filter((sample) => sample.range === range);
        const times = samples.map((sample) => sample.ms);
        return [
          range,
          String(samples.length),
          times.length ? ms(percentile(times, 0.5)) : '-',
          times.length ? ms(percentile(times, 0.99)) : '-',
          mean(samples.map((sample) => sample.answer.data.length)),
          mean(samples.map((sample) => sample.answer.meta.stored?.buckets_from_store ?? 0)),
        ];
      }),
    ]),
    `processing_time_ms (inside the service, 1 at a time): p50 ` +
      `${percentile(
        storeHits.sequential.samples.map((s) => s.answer.meta.processing_time_ms),
        0.5,
      )}, p99 ${percentile(
        storeHits.sequential.samples.map((s) => s.answer.meta.processing_time_ms),
        0.99,
      )}`,
    '',
    ...firstFetchLines(result),
    ...result.failures.slice(0, 5).map((failure) => `failure:  ${failure}`),
    result.failures.length > 5 ? `          … ${result.failures.length - 5} more failures` : '',
  ];
  return lines.join('\n');
}

function storeHitRow(
  name: string,
  phase: Phase<{ ms: number }>,
  asked: number,
  isTarget: boolean,
): string[] {
  const times = phase.samples.map((sample) => sample.ms);
  if (times.length === 0) return [name, '0', String(asked), '-', '-', '-', '-', '-', 'MISSED'];
  const under = percentile(times, 0.99) <= STORE_HIT_TARGET_MS;
  return [
    name,
    String(times.length),
    String(asked - times.length),
    (times.length / phase.seconds).toFixed(1),
    ...quantiles(times),
    isTarget ? verdict(under) : `(${under ? 'under' : 'over'})`,
  ];
}

/** The first fetches: per miner, per slowest miner called, and the calls each query made. */
function firstFetchLines(result: StoredResult): string[] {
  const { firstFetches, direct } = result;
  const samples = firstFetches.samples;
  if (samples.length === 0) return ['First fetches: none succeeded'];
  const slowest = samples.map((sample) => slowestCalled(sample, direct));
  const excess = samples.map((sample, index) => sample.ms - direct[slowest[index]].p50);
  const excessP99 = percentile(excess, 0.99);
  const times = samples.map((sample) => sample.ms);
  const perMiner = result.behaviours.map((behaviour, uid) => [
    `uid ${uid}`,
    describeBehaviour(behaviour),
    ms(direct[uid].p50),
    ms(direct[uid].p99),
    String(sum(samples.map((sample) => sample.calls[uid].GetContentsByBuckets))),
    String(slowest.filter((called) => called === uid).length),
  ]);
  const bySlowest = result.behaviours.flatMap((_, uid) => {
    const group = samples.filter((_, index) => slowest[index] === uid).map((s) => s.ms);
    if (group.length === 0) return [];
    const target = direct[uid].p50 + MARGIN_MS;
    const p99 = percentile(group, 0.99);
    return [
      [
        `slowest called: uid ${uid}`,
        String(group.length),
        ms(percentile(group, 0.5)),
        ms(p99),
        ms(direct[uid].p50),
        ms(target),
        verdict(p99 <= target),
      ],
    ];
  });
  const perQuery = (synapse: SynapseName) =>
    samples.map((sample) => sum(sample.calls.map((calls) => calls[synapse])));
  const stored = (pick: (s: NonNullable<FirstFetchSample['answer']['meta']['stored']>) => number) =>
    mean(samples.map((sample) => pick(sample.answer.meta.stored!)));
  return [
    `First fetches: ${samples.length} queries one at a time, limit 100, each a day of one of ` +
      `${new Set(samples.map((s) => s.label)).size} labels the store holds no fetch of ` +
      `(${firstFetches.nothingToFetch} more planned no bucket: not counted)`,
    table([
      ['miner', 'behaviour', 'direct p50 ms', 'direct p99 ms', 'contents calls', 'slowest called'],
      ...perMiner,
    ]),
    `(direct: ${result.options.direct} GetContentsByBuckets calls per miner for 24 buckets, ` +
      'one at a time, answer read: the baseline of the queries that called it)',
    '',
    table([
      ['', 'requests', 'p50 ms', 'p99 ms', 'baseline ms', 'target ms', 'p99 ≤ target'],
      ...bySlowest,
    ]),
    `all first fetches: p50 ${ms(percentile(times, 0.5))} ms, p99 ${ms(percentile(times, 0.99))} ms; ` +
      `over the slowest miner called: p50 ${ms(percentile(excess, 0.5))} ms, p99 ${ms(excessP99)} ms`,
    `target:   p99 of (request − slowest called miner's direct p50) ≤ ${MARGIN_MS} ms: ` +
      verdict(excessP99 <= MARGIN_MS),
    '',
    `calls per query: ${SYNAPSE_NAMES.map((synapse) => `${synapse} ${mean(perQuery(synapse))}`).join(', ')}`,
    `          GetContentsByBuckets per query ${tally(perQuery('GetContentsByBuckets'))}; ` +
      `miners called per query ${tally(samples.map((s) => s.calls.filter(called).length))}`,
    `          403s from miners during the whole run: ${result.refused}`,
    `meta:     buckets planned ${stored((s) => s.buckets_planned)}, fetched now ` +
      `${stored((s) => s.buckets_fetched_now)}, missing ${stored((s) => s.buckets_missing)} ` +
      `per query (means); items per answer ${mean(samples.map((s) => s.answer.data.length))}`,
    `cpu:      service ${formatPercent(result.used.cpu[0])}, devnet ${formatPercent(result.used.cpu[1])} of a core ` +
      'during the first fetches',
    '',
  ];
}

/** The uid of the miner with the highest direct latency among those the query called. */
function slowestCalled(sample: FirstFetchSample, direct: { p50: number }[]): number {
  const uids = sample.calls.flatMap((calls, uid) => (called(calls) ? [uid] : []));
  if (uids.length === 0) return 0;
  return uids.reduce((slow, uid) => (direct[uid].p50 > direct[slow].p50 ? uid : slow));
}

function called(calls: Record<SynapseName, number>): boolean {
  return calls.GetContentsByBuckets + calls.GetDataEntityBucket > 0;
}

function callSummary(calls: Record<SynapseName, number>[]): string {
  const total = (synapse: SynapseName) => sum(calls.map((counts) => counts[synapse]));
  const all = sum(SYNAPSE_NAMES.map(total));
  return `${all} (${SYNAPSE_NAMES.map((synapse) => `${synapse} ${total(synapse)}`).join(', ')})`;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
