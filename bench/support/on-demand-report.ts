import os from 'node:os';
import { AppConfig } from '../../src/config/app-config';
import { describeBehaviour, MinerBehaviour } from '../../src/devnet/behaviour';
import { HASHTAGS } from '../../src/devnet/vocabulary';
import { percentile, Usage } from './measure';
import { commandLine, formatPercent, machineLine, ordinal, table, tally, Verdict } from './report';

export const ON_DEMAND_PATH = '/api/v1/on_demand_data_request';
/** The head of the corpus' Zipf-ordered hashtags: every miner holds items for each. */
export const QUERY_KEYWORDS = HASHTAGS.slice(0, 6).map(({ tag }) => tag);
/** Calls to each miner before the timed ones. */
export const UNTIMED = 3;
/** Target: p99 ≤ the baseline miner's p50 + this. */
const MARGIN_MS = 50;

/** The fields of the endpoint's `meta` read here (see DataQueryService). */
export interface QueryMeta {
  miners_queried: number;
  miners_responded: number;
  miners_failed: { count: number; reasons: Record<string, number> };
  hedged_requests: number;
  deadline_reached: boolean;
  processing_time_ms: number;
  cache_hit: boolean;
}
/** One measured query; `at` in seconds since the run started. */
export type Sample = { ms: number; at: number; meta: QueryMeta };

/** Queries timed one by one, over `seconds`. */
export interface QueryRun {
  samples: Sample[];
  seconds: number;
}

/** bench:on-demand's settings (bench/on-demand.ts, its flags). */
export interface OnDemandOptions {
  /** Fixed latencies of the healthy miners, ms. */
  latencies: number[];
  /** Miners that never answer. */
  hung: number;
  requests: number;
  warmup: number;
  concurrency: number;
  /** Calls to each healthy miner timed directly. */
  direct: number;
  activeTasks: number;
}

/** A healthy miner timed directly. */
export interface DirectTimes {
  uid: number;
  p50: number;
  p99: number;
}

/** What a bench:on-demand run measured (bench/on-demand.ts, benchmark). */
export interface OnDemandRun extends QueryRun {
  behaviours: MinerBehaviour[];
  direct: DirectTimes[];
  /** The miner the quorum waits for: the QUERY_QUORUM-th fastest healthy one. */
  baseline: DirectTimes;
  network: AppConfig['network'];
  taskSettings: AppConfig['tasks'];
  env: NodeJS.ProcessEnv;
  /** OnDemandRequest calls each miner had during the measured queries. */
  calls: number[];
  used: Usage;
  /** Load average before and after the measured queries. */
  loads: number[];
  failures: string[];
  /** The same fan-outs straight to the healthy miners, without the gateway. */
  ideal: { times: number[]; seconds: number };
  /** The queries measured again while scraping tasks are collected (--active-tasks). */
  withTasks: (QueryRun & { minerCalls: number; behind: string; behindBefore: string }) | undefined;
  database: string;
}

export function report(result: OnDemandRun, options: OnDemandOptions): string {
  const { samples, baseline, network, env, used, ...run } = result;
  const ms = (value: number): string => value.toFixed(1);
  const delta = (value: number): string => `${value < 0 ? '' : '+'}${ms(value)} ms`;
  const quantiles = (values: number[]): number[] =>
    [0.5, 0.9, 0.99, 1].map((q) => percentile(values, q));
  const times = samples.map((sample) => sample.ms);
  const [p50, , p99] = quantiles(times);
  const [ideal50, , ideal99] = quantiles(run.ideal.times);
  const service = quantiles(samples.map((s) => s.meta.processing_time_ms));
  const meta = (pick: (meta: QueryMeta) => number | boolean): string =>
    tally(samples.map((sample) => pick(sample.meta)));
  const reasons = samples.flatMap(({ meta }) =>
    Object.entries(meta.miners_failed.reasons).flatMap(([why, n]) => Array<string>(n).fill(why)),
  );
  const minerRows = run.behaviours.map((behaviour, uid) => {
    const direct = run.direct.find((entry) => entry.uid === uid);
    const cells = direct ? [ms(direct.p50), ms(direct.p99)] : ['-', '-'];
    return [`uid ${uid}`, describeBehaviour(behaviour), ...cells, String(run.calls[uid])];
  });
  const row = (name: string, times: number[], errors: number, seconds: number): string[] =>
    [name, String(times.length), String(errors), (times.length / seconds).toFixed(1)].concat(
      quantiles(times).map(ms),
    );
  const asked = Math.min(network.minersPerQuery, run.behaviours.length);
  const spares = Math.min(run.behaviours.length, asked + network.minersPerQuery) - asked;
  const slowest = [...samples].sort((a, b) => b.ms - a.ms).slice(0, 3);
  const target = baseline.p50 + MARGIN_MS;
  const lines = [
    '',
    `POST ${ON_DEMAND_PATH}: the real service over a ${run.behaviours.length}-miner devnet on 127.0.0.1`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}; load average ${run.loads.map((l) => l.toFixed(2)).join(' → ')}` +
      (run.loads[0] > os.cpus().length / 2 ? ' (a busy machine: expect noise)' : ''),
    `gateway:  QUERY_MINERS=${network.minersPerQuery} QUERY_QUORUM=${network.quorum} ` +
      `QUERY_DEADLINE_MS=${network.queryDeadlineMs} MINER_CONCURRENCY=${network.minerConcurrency}; ` +
      'QUERY_CACHE_TTL_SECONDS=0: no cache, every query goes to the miners',
    `          LOG_LEVEL=${env.LOG_LEVEL} RATE_LIMIT_VALIDATOR=${env.RATE_LIMIT_VALIDATOR} ` +
      `RATE_LIMIT_WINDOW_SECONDS=${env.RATE_LIMIT_WINDOW_SECONDS} DEVNET_MINERS=0 ` +
      `INDEX_SYNC_ON_START=${env.INDEX_SYNC_ON_START} MINER_CALL_BUDGETS=${env.MINER_CALL_BUDGETS}, validator key`,
    `load:     fetch, ${options.warmup} warm-up + ${options.requests} measured queries, ` +
      `${options.concurrency} in flight, source x, limit 100, keywords ${QUERY_KEYWORDS.join(' ')}`,
    `database: ${run.database}`,
    '',
    table([['miner', 'behaviour', 'direct p50 ms', 'direct p99 ms', 'calls in run'], ...minerRows]),
    `(direct: ${options.direct} calls per miner, one at a time, after ${UNTIMED} untimed)`,
    '',
    table([
      ['', 'requests', 'errors', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      row('ideal quorum (no gateway) *', run.ideal.times, 0, run.ideal.seconds),
      row(ON_DEMAND_PATH, times, run.failures.length, run.seconds),
    ]),
    `* ${options.concurrency} at a time, each straight to the ${run.direct.length} healthy miners ` +
      `until ${network.quorum} answered: what the devnet allows at this load`,
    '',
    `baseline: uid ${baseline.uid}, the ${ordinal(network.quorum)}-fastest healthy miner ` +
      `(the quorum waits for it): direct p50 ${ms(baseline.p50)} ms, p99 ${ms(baseline.p99)} ms`,
    `p99 − baseline: ${ms(p99 - baseline.p50)} ms over its p50 (${ms(p99 - baseline.p99)} over p99)`,
    `target:   p99 ≤ baseline p50 + ${MARGIN_MS} ms = ${ms(target)} ms: ` +
      `${onDemandVerdict(p99, ideal99, target)} (p99 ${ms(p99)} ms)`,
    `gateway over the ideal quorum: p50 ${delta(p50 - ideal50)}, p99 ${delta(p99 - ideal99)}` +
      (ideal99 > target
        ? '; even the ideal quorum misses it: the devnet on this machine is the limit'
        : ''),
    '',
    `meta:     miners_responded ${meta((m) => m.miners_responded)}; ` +
      `miners_queried ${meta((m) => m.miners_queried)}`,
    `          hedged_requests ${meta((m) => m.hedged_requests)} ` +
      `(${spares} spare miners beyond the ${asked} asked); ` +
      `deadline_reached ${meta((m) => m.deadline_reached)}`,
    `          miners_failed reasons ${tally(reasons)}`,
    `          processing_time_ms (inside the service) p50 ${service[0]}, ` +
      `p90 ${service[1]}, p99 ${service[2]}`,
    `slowest:  ${slowest.map((s) => `${ms(s.ms)} ms at ${s.at.toFixed(1)} s`).join(', ')}`,
    `cpu:      service ${formatPercent(used.cpu[0])}, devnet ${formatPercent(used.cpu[1])} of a core; load ` +
      `generator event loop ${formatPercent(used.busy)} busy, delay p99 ${ms(used.delayP99)} ms`,
    ...withTasksLines(result, options, target, (values) => percentile(values, 0.99), ms),
    ...run.failures.slice(0, 5).map((failure) => `failure:  ${failure}`),
    '',
  ];
  return lines.join('\n');
}

function withTasksLines(
  result: OnDemandRun,
  options: OnDemandOptions,
  target: number,
  p99Of: (values: number[]) => number,
  ms: (value: number) => string,
): string[] {
  const { withTasks, taskSettings } = result;
  if (!withTasks) return [];
  const p99 = p99Of(withTasks.samples.map((sample) => sample.ms));
  const without = p99Of(result.samples.map((sample) => sample.ms));
  const userCalls = withTasks.samples.reduce((sum, s) => sum + s.meta.miners_queried, 0);
  return [
    '',
    `with ${options.activeTasks} active tasks being collected (TASK_COLLECT_PER_MINUTE=` +
      `${taskSettings.collectPerMinute}, TASK_COLLECT_CONCURRENCY=${taskSettings.collectConcurrency}, ` +
      `TASK_COLLECT_INTERVAL=60 s: always due):`,
    `          p99 ${ms(p99)} ms with tasks vs ${ms(without)} ms without; target ${ms(target)} ms: ` +
      `${p99 <= target ? 'MET' : 'MISSED'}`,
    `          during it: ${withTasks.minerCalls} OnDemandRequest calls to the miners, ${userCalls} ` +
      `of them the users' queries; tasks behind ${withTasks.behindBefore} → ${withTasks.behind}`,
  ];
}

/**
 * MET or MISSED by the gateway's p99, but UNDECIDED when it missed while the ideal quorum (the
 * miners asked straight, no gateway, at the same load in the same run) missed too and the
 * gateway stayed within the target's margin of it: the devnet on this machine then sets the
 * pace, and the run says nothing of the gateway. A gateway further behind the ideal quorum than
 * the margin misses whatever the devnet did (a review: 540 ms against the ideal's 303 ms is
 * 237 ms the gateway added, where the target allows 50).
 */
export function onDemandVerdict(p99: number, idealP99: number, target: number): Verdict {
  if (p99 <= target) return 'MET';
  return idealP99 > target && p99 - idealP99 <= MARGIN_MS ? 'UNDECIDED' : 'MISSED';
}
