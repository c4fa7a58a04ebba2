import os from 'node:os';
import { holderLookupReport, HolderLookupResult, holderLookupsMatch } from './holder-lookup';
import { percentile } from './measure';
import { commandLine, formatInt, machineLine, table } from './report';
import { DatabaseFacts } from './stats-database';
import { EndpointResult, HEALTH_PATH, HTTP_WARMUP, HttpRun } from './stats-endpoints';
import { HOURS, SIZE_MEDIAN, SIZE_SIGMA, StatsShape, X_SHARE } from './stats-index';
import { BlockRun, IngestRun, ROUNDS, STEP_METHODS, STEPS } from './stats-ingest';

/** Targets of the task. */
const TARGET_P99_MS = 20;
const TARGET_SPEEDUP = 100;
const TARGET_INGEST_ROWS_PER_S = 300_000;

/** bench:stats' settings (bench/stats.ts, its flags). */
export interface StatsOptions extends StatsShape {
  /** Ingest concurrency levels, interleaved. */
  concurrency: number[];
  /** Miners whose index is replaced once more after the load: the steady state of the sync. */
  resync: number;
  requests: number;
  baselineRuns: number;
}

/** What a bench:stats run measured (bench/stats.ts, benchmark). */
export interface StatsRun extends DatabaseFacts {
  load: IngestRun;
  /** False when the repositories' internals changed: no per-step timings. */
  instrumented: boolean;
  holderLookups: HolderLookupResult[];
  resync: BlockRun | undefined;
  /** 1-minute load averages: at start, after ingest, after each endpoint. */
  loadAverages: number[];
  results: EndpointResult[];
  /** The health endpoint over the same pipeline: the noise floor. */
  control: HttpRun;
  env: NodeJS.ProcessEnv;
  database: string;
}

const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(0));
const gib = (bytes: number): string =>
  bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const met = (ok: boolean): string => (ok ? 'met' : 'MISSED');
const p50 = (values: number[]): number => percentile(values, 0.5);
const p99 = (values: number[]): number => percentile(values, 0.99);

/** Prints the run's tables, targets and plans; true when every answer matched its baseline. */
export function report(result: StatsRun, options: StatsOptions): boolean {
  const ingest = ingestFigures(result, options);
  const endpoints = endpointFigures(result);
  const lines = [
    ...headerLines(result, options, ingest),
    '',
    ...ingestLines(result, options, ingest),
    '',
    ...endpointLines(result, options, endpoints),
    '',
    ...targetLines(ingest, endpoints),
    '',
    ...planLines(result),
    '',
    ...holderLookupReport(result.holderLookups),
  ];
  process.stdout.write(lines.join('\n'));
  return (
    endpoints.mismatches.length === 0 && ingest.countOk && holderLookupsMatch(result.holderLookups)
  );
}

type IngestFigures = ReturnType<typeof ingestFigures>;
type EndpointFigures = ReturnType<typeof endpointFigures>;

/** Ingest: per concurrency level, rows over the summed wall time of its blocks. */
function ingestFigures(result: StatsRun, options: StatsOptions) {
  const { load } = result;
  const expected = options.miners * options.buckets;
  const totalRows = load.blocks.reduce((sum, block) => sum + block.rows, 0);
  const totalSeconds = load.blocks.reduce((sum, block) => sum + block.seconds, 0);
  const levels = options.concurrency.filter((c, i, all) => all.indexOf(c) === i);
  const perLevel = levels.map((concurrency) => {
    const blocks = load.blocks.filter((block) => block.concurrency === concurrency);
    const miners = load.miners.filter((miner) => miner.concurrency === concurrency);
    const rows = blocks.reduce((sum, block) => sum + block.rows, 0);
    const seconds = blocks.reduce((sum, block) => sum + block.seconds, 0);
    const minerRates = miners.map((miner) => miner.rows / (miner.ms / 1000));
    return { concurrency, blocks, miners, rows, seconds, rate: rows / seconds, minerRates };
  });
  const best = [...perLevel].sort((a, b) => b.rate - a.rate)[0];
  const countOk = result.count === expected && totalRows === expected;
  return { expected, totalRows, totalSeconds, perLevel, best, countOk };
}

function endpointFigures(result: StatsRun) {
  const { results } = result;
  const worstP99 = [...results].sort((a, b) => p99(b.http.times) - p99(a.http.times))[0];
  const speedup = (r: EndpointResult): number => p50(r.baseline) / p50(r.http.times);
  const slowest = [...results].sort((a, b) => speedup(a) - speedup(b))[0];
  const mismatches = results.filter((r) => r.mismatch);
  return { worstP99, speedup, slowest, mismatches };
}

function headerLines(result: StatsRun, options: StatsOptions, ingest: IngestFigures): string[] {
  const loads = result.loadAverages.map((load) => load.toFixed(2));
  const busy = result.loadAverages.some((load) => load > os.cpus().length / 2 + 0.5);
  return [
    '',
    `Stats endpoints of the real service over a ${formatInt(ingest.expected)}-row miner index, ` +
      'vs the original GROUP BY over that index',
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}`,
    `          load average (1 min): ${loads[0]} at start, ${loads[1]} after ingest, ` +
      `${loads.slice(2).join(' ')} after each endpoint` +
      (busy ? '  (a busy machine: another process competes for the CPUs, expect noise)' : ''),
    `postgres: ${result.settings.map((s) => `${s.name}=${s.setting}`).join(' ')}`,
    `database: ${result.database}`,
    `data:     ${options.miners} miners (syncNeurons; credibility 0.05–1 set by UPDATE before ingest) × ` +
      `${formatInt(options.buckets)} buckets (${X_SHARE * 100}% X, rest Reddit); ${formatInt(options.labels)} labels ` +
      `per source, Zipf (exponent 0.9–1.2 per miner); ${HOURS} hours, skewed to recent; sizes log-normal ` +
      `(median ${SIZE_MEDIAN / 1000} kB, σ ${SIZE_SIGMA}, all > 0 and ≤ 128 MiB); seed ${options.seed}`,
    `          generation ${result.load.generationSeconds.toFixed(1)} s (before each block, outside the ingest timing)`,
    `app:      LOG_LEVEL=${result.env.LOG_LEVEL} RATE_LIMIT_VALIDATOR=${result.env.RATE_LIMIT_VALIDATOR} ` +
      `RATE_LIMIT_WINDOW_SECONDS=${result.env.RATE_LIMIT_WINDOW_SECONDS} METAGRAPH_FILE=<the loaded miners> ` +
      'INDEX_SYNC_ON_START=false INDEX_SYNC_INTERVAL=86400, validator key',
  ];
}

function ingestLines(result: StatsRun, options: StatsOptions, ingest: IngestFigures): string[] {
  const { load, resync } = result;
  const { perLevel, totalRows, totalSeconds, expected, countOk } = ingest;
  const ingestRows = perLevel.map((level) => [
    `concurrency ${level.concurrency}`,
    String(level.blocks.length),
    String(level.miners.length),
    formatInt(level.rows),
    level.seconds.toFixed(1),
    formatInt(level.rate),
    formatInt(p50(level.minerRates)),
    formatInt(p50(level.miners.map((miner) => miner.ms))),
  ]);
  const allRates = load.miners.map((miner) => miner.rows / (miner.ms / 1000));
  ingestRows.push([
    'all',
    String(load.blocks.length),
    String(load.miners.length),
    formatInt(totalRows),
    totalSeconds.toFixed(1),
    formatInt(totalRows / totalSeconds),
    formatInt(p50(allRates)),
    formatInt(p50(load.miners.map((miner) => miner.ms))),
  ]);
  if (resync) {
    ingestRows.push([
      're-sync (conc 1)',
      '1',
      String(resync.miners.length),
      formatInt(resync.rows),
      resync.seconds.toFixed(1),
      formatInt(resync.rows / resync.seconds),
      formatInt(p50(resync.miners.map((miner) => miner.rows / (miner.ms / 1000)))),
      formatInt(p50(resync.miners.map((miner) => miner.ms))),
    ]);
  }
  const stepColumns = [...perLevel.map((level) => level.miners), resync?.miners ?? []];
  const stepRows = STEPS.map((step) => {
    const cells = stepColumns.map((miners) => {
      const values = miners.map((miner) => miner.steps[step] ?? NaN).filter(Number.isFinite);
      return values.length > 0 ? ms(p50(values)) : 'n/a';
    });
    const ones = perLevel[0].miners;
    const total = ones.reduce((sum, miner) => sum + miner.ms, 0);
    const share = ones.reduce((sum, miner) => sum + (miner.steps[step] ?? 0), 0) / total;
    return [step, ...cells, `${(100 * share).toFixed(1)}%`];
  });
  const blockRows = load.blocks.map((block) => [
    `block ${block.index + 1}`,
    String(block.concurrency),
    String(block.miners),
    formatInt(block.rowsBefore),
    formatInt(block.rows),
    block.seconds.toFixed(1),
    formatInt(block.rows / block.seconds),
  ]);
  return [
    'INGEST: per miner JSON.parse(answer) + readCompressedIndex (the index string) + parseCompressedIndex(index, now) + MinerIndexRepository.replaceMinerIndex(uid, rows)',
    `  blocks of ${load.blockSize} miners, concurrency ${options.concurrency.join(',')} interleaved ` +
      `(${ROUNDS} rounds), so each level meets the table at every size; aggregate writers are ` +
      'serialized by the advisory lock',
    `  re-sync: then ${resync?.miners.length ?? 0} miners (uids 0..) replace their index once more with a ` +
      'new one, one at a time: the steady state of the sync job (old rows deleted, deltas subtract)',
    '',
    table([
      ['', 'blocks', 'miners', 'rows', 'seconds', 'rows/s', 'miner p50 rows/s', 'miner p50 ms'],
      ...ingestRows,
    ]),
    '',
    result.instrumented
      ? table([
          [
            'step (median ms per miner)',
            ...perLevel.map((level) => `conc ${level.concurrency}`),
            're-sync',
            `share @conc ${perLevel[0].concurrency}`,
          ],
          ...stepRows,
        ])
      : `steps:    n/a (the repository internals changed: ${STEP_METHODS.join('/')} not all found)`,
    '',
    table([
      ['', 'concurrency', 'miners', 'rows before', 'rows', 'seconds', 'rows/s'],
      ...blockRows,
    ]),
    '',
    `churn:    ${result.churn
      .map(
        (t) =>
          `${t.relname} ${formatInt(Number(t.live))} live rows, ${formatInt(Number(t.upd))} ` +
          `updates+deletes, ${formatInt(Number(t.dead))} dead rows before VACUUM`,
      )
      .join('; ')}`,
    `row count: SELECT count(*) FROM miner_index = ${formatInt(result.count)} ` +
      `(expected ${formatInt(expected)}; parsed ${formatInt(totalRows)}): ${countOk ? 'OK' : 'WRONG'}`,
    `size:     ${result.sizes.map((s) => `${s.name} ${gib(s.bytes)}`).join(', ')}`,
    `          after VACUUM ANALYZE (${result.vacuumSeconds.toFixed(1)} s, not counted as ingest)`,
  ];
}

function endpointLines(
  result: StatsRun,
  options: StatsOptions,
  endpoints: EndpointFigures,
): string[] {
  const over = (run: HttpRun): string =>
    String(run.times.filter((time) => time > TARGET_P99_MS).length);
  const diagnostics = (run: HttpRun): string[] => [
    over(run),
    run.appCpuMs.toFixed(2),
    run.delayP99.toFixed(1),
  ];
  const endpointRows = result.results.map((r) => [
    `GET ${r.endpoint.path}`,
    ms(p50(r.http.times)),
    ms(p99(r.http.times)),
    ms(p50(r.baseline)),
    ms(p99(r.baseline)),
    `${(p50(r.baseline) / p50(r.http.times)).toFixed(0)}×`,
    ms(p50(r.sql)),
    ms(p99(r.sql)),
    ...diagnostics(r.http),
  ]);
  const { mismatches } = endpoints;
  return [
    `ENDPOINTS: ${options.requests} sequential requests each over HTTP (127.0.0.1, keep-alive, ` +
      `after ${HTTP_WARMUP} untimed); GROUP BY: the original's query with pg, EXPLAIN ANALYZE as warm-up, ` +
      `then ${options.baselineRuns} runs (its p99 is the slowest run)`,
    '',
    table([
      [
        'endpoint',
        'ours p50 ms',
        'ours p99 ms',
        'GROUP BY p50 ms',
        'GROUP BY p99 ms',
        'speed-up',
        'our SQL p50',
        'our SQL p99',
        `> ${TARGET_P99_MS} ms`,
        'app CPU ms/req',
        'bench delay p99',
      ],
      ...endpointRows,
      [
        `GET ${HEALTH_PATH} (control)`,
        ms(p50(result.control.times)),
        ms(p99(result.control.times)),
        ...['-', '-', '-', '-', '-'],
        ...diagnostics(result.control),
      ],
    ]),
    '(speed-up = GROUP BY p50 / ours p50 over HTTP; our SQL = the MinerIndexReadRepository call in-process, no HTTP;',
    ` > ${TARGET_P99_MS} ms = timed requests over the p99 target; app CPU = CPU the service process used ` +
      'per request (/proc);',
    ' bench delay = event-loop delay p99 of this process while timing; control = the health endpoint, same ' +
      'key check and throttler, small cached body: the noise floor)',
    `answers:  ${
      mismatches.length === 0
        ? 'every HTTP answer equals the GROUP BY result (labels/buckets, order, bytes; adj within float rounding)'
        : mismatches.map((r) => `${r.endpoint.name}: ${r.mismatch}`).join('; ')
    }`,
  ];
}

function targetLines(ingest: IngestFigures, endpoints: EndpointFigures): string[] {
  const { worstP99, speedup, slowest } = endpoints;
  const { best, totalRows, totalSeconds } = ingest;
  return [
    'TARGETS',
    `  p99 ≤ ${TARGET_P99_MS} ms on every endpoint:      ${met(p99(worstP99.http.times) <= TARGET_P99_MS)} ` +
      `(worst ${ms(p99(worstP99.http.times))} ms, ${worstP99.endpoint.name})`,
    `  ≥ ${TARGET_SPEEDUP}× faster than the GROUP BY (p50): ${met(speedup(slowest) >= TARGET_SPEEDUP)} ` +
      `(lowest ${speedup(slowest).toFixed(0)}×, ${slowest.endpoint.name})`,
    `  ingest ≥ ${formatInt(TARGET_INGEST_ROWS_PER_S)} rows/s:          ${met(best.rate >= TARGET_INGEST_ROWS_PER_S)} ` +
      `(best ${formatInt(best.rate)} rows/s at concurrency ${best.concurrency}; ` +
      `all blocks ${formatInt(totalRows / totalSeconds)} rows/s)`,
  ];
}

function planLines(result: StatsRun): string[] {
  return [
    'PLANS (EXPLAIN (ANALYZE, BUFFERS)); the reddit variants have the same shapes as the x ones',
    ...result.results
      .filter((r) => !r.endpoint.name.endsWith('reddit'))
      .flatMap((r) => [
        '',
        `-- ${r.endpoint.name}: ours (MinerIndexReadRepository SQL)`,
        ...r.ourPlan,
        `-- ${r.endpoint.name}: GROUP BY (warm-up run)`,
        ...r.baselinePlan,
      ]),
  ];
}
