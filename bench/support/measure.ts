import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { refuseUsage } from './flags';

/** How hard and how long to load; the same flags and BENCH_* variables for every benchmark. */
export interface LoadOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
}

export interface LoadFlags {
  seconds?: string;
  warmup?: string;
  connections?: string;
  rounds?: string;
}

/** Defaults: 2 × (2 s warm-up + 3 × 5 s) keeps a two-target run well under a minute. */
export function loadOptions(flags: LoadFlags, env: NodeJS.ProcessEnv = process.env): LoadOptions {
  const setting = (flag: keyof LoadFlags, variable: string, fallback: number, integer: boolean) =>
    numberSetting(settingText(flag, flags[flag], variable, env), fallback, integer);
  return {
    seconds: setting('seconds', 'BENCH_SECONDS', 5, false),
    warmupSeconds: setting('warmup', 'BENCH_WARMUP_SECONDS', 2, false),
    connections: setting('connections', 'BENCH_CONNECTIONS', 10, true),
    rounds: setting('rounds', 'BENCH_ROUNDS', 3, true),
  };
}

/** A setting's text and where it came from, so that a refusal names what to change. */
export interface SettingText {
  /** Undefined when not given. */
  text: string | undefined;
  /** `--rows`, or `BENCH_ROWS (for --rows)` when the variable gave it. */
  source: string;
}

/**
 * The text of flag `--<flag>` (its parsed `value`), else of its BENCH_* `variable`. An empty
 * variable is unset (`BENCH_ROWS= npm run …` keeps the default); an empty flag (`--rows=`) is
 * given, and refused: typed on purpose, it must not quietly mean the default.
 */
export function settingText(
  flag: string,
  value: string | undefined,
  variable?: string,
  env: NodeJS.ProcessEnv = process.env,
): SettingText {
  if (value !== undefined || variable === undefined) return { text: value, source: `--${flag}` };
  const text = env[variable] === '' ? undefined : env[variable];
  return { text, source: `${variable} (for --${flag})` };
}

/**
 * A positive (or, with `zero`, non-negative) number, or `fallback` when not given. Nonsense
 * (blank, NaN, 0 s, 2.5 connections) is refused rather than benchmarked: one line naming the
 * flag or variable, exit 2.
 */
export function numberSetting(
  setting: SettingText,
  fallback: number,
  integer: boolean,
  zero = false,
): number {
  const { text, source } = setting;
  if (text === undefined) return fallback;
  // Blank is not 0, as Number() reads it.
  const value = text.trim() === '' ? NaN : Number(text);
  if (!(value > 0 || (zero && value === 0)) || (integer && !Number.isInteger(value))) {
    const kind = `${zero ? 'non-negative' : 'positive'} ${integer ? 'integer' : 'number'}`;
    refuseUsage(`${source} must be a ${kind}, not '${text}'`);
  }
  return value;
}

/**
 * A positive (with `zero`, non-negative) integer from flag `--<flag>` (its parsed `value`), else
 * BENCH_* `variable`, else `fallback`: numberSetting of settingText.
 */
export function integerSetting(
  flag: string,
  value: string | undefined,
  variable: string,
  fallback: number,
  zero = false,
): number {
  return numberSetting(settingText(flag, value, variable), fallback, true, zero);
}

/** A comma-separated list of integers (`--latencies 40,80`), each as numberSetting takes it. */
export function integerListSetting(
  setting: SettingText,
  fallback: readonly number[],
  zero = false,
): number[] {
  if (setting.text === undefined) return [...fallback];
  return setting.text
    .split(',')
    .map((text) => numberSetting({ text: text.trim(), source: setting.source }, NaN, true, zero));
}

/**
 * The seed of a fast-check run, from a flag or BENCH_*_SEED variable; unset, a new one each run,
 * which the report prints so that a finding can be repeated with `--seed`.
 */
export function seedSetting(setting: SettingText, now = Date.now()): number {
  return numberSetting(setting, now % 2 ** 31, true, true);
}

export interface LoadTarget {
  url: string;
  headers: Record<string, string>;
}

/** One load run, reduced to what the reports compare. */
export interface Round {
  rps: number;
  /** Latency percentiles in ms; autocannon records whole milliseconds, so 0 means < 1 ms. */
  p50: number;
  p99: number;
  non2xx: number;
  bytesPerResponse: number;
  /** Responses completed (summed, not a median, over rounds). */
  responses: number;
}

/**
 * Runs autocannon against `target` on loopback. Any non-2xx answer, socket error or timeout
 * throws: a benchmark that counted 429s or 500s as throughput would report nonsense.
 */
export async function measure(
  name: string,
  target: LoadTarget,
  seconds: number,
  connections: number,
): Promise<Round> {
  const result = await autocannon({
    url: target.url,
    headers: target.headers,
    connections,
    duration: seconds,
    pipelining: 1,
  });
  const { non2xx, errors, timeouts } = result;
  const responses = result.requests.total;
  if (non2xx > 0 || errors > 0 || timeouts > 0 || responses === 0) {
    throw new Error(
      `${name}: ${non2xx} non-2xx (4xx ${result['4xx']}, 5xx ${result['5xx']}), ` +
        `${errors} errors, ${timeouts} timeouts, ${responses} responses in ${result.duration} s`,
    );
  }
  return {
    // Completed responses over the measured wall time: finer than the mean of 1 s samples.
    rps: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx,
    bytesPerResponse: result.throughput.total / responses,
    responses,
  };
}

export interface Probe {
  status: number;
  contentType: string;
  /** The response's header names, lower case and sorted. */
  headerNames: string[];
  text: string;
}

/** One request outside the load, to check a target before measuring it. */
export async function probe(target: LoadTarget): Promise<Probe> {
  const response = await fetch(target.url, { headers: target.headers });
  const contentType = response.headers.get('content-type') ?? '';
  // Sorted, lower case (fetch's Headers iterate so).
  const headerNames = [...response.headers.keys()];
  return { status: response.status, contentType, headerNames, text: await response.text() };
}

export function median(values: number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Nearest-rank percentile (q in 0..1) of exact per-request samples: always a real sample. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('percentile of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * For each of `runs`, the median over `rounds` of what `time` measured of it. The runs alternate
 * within each round, in the opposite order each other round, so that a slow spell of the machine,
 * and what one run leaves to the next (garbage, caches), hit every side alike.
 */
export async function alternatingMedians<Name extends string, Run>(
  rounds: number,
  runs: Record<Name, Run>,
  time: (run: Run) => number | Promise<number>,
): Promise<Record<Name, number>> {
  const entries = Object.entries(runs) as [Name, Run][];
  const times = new Map<Name, number[]>(entries.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? entries : [...entries].reverse();
    for (const [name, run] of order) times.get(name)?.push(await time(run));
  }
  return Object.fromEntries(
    entries.map(([name]) => [name, median(times.get(name) ?? [])]),
  ) as Record<Name, number>;
}

/** Runs `task(0..count-1)` with at most `concurrency` in flight, in index order. */
export async function runPool(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) await task(index);
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
}

/** Medians over rounds: robust to one round disturbed by the machine. */
export function summarize(rounds: Round[]): Round {
  const of = (pick: (round: Round) => number): number => median(rounds.map(pick));
  return {
    rps: of((r) => r.rps),
    p50: of((r) => r.p50),
    p99: of((r) => r.p99),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    bytesPerResponse: of((r) => r.bytesPerResponse),
    responses: rounds.reduce((sum, r) => sum + r.responses, 0),
  };
}

/** CPU seconds (user + system) used so far by process `pid`, from Linux's /proc; else null. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces): state is [0], utime [11],
    // stime [12].
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : null; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

export interface Usage {
  /** Share of one core each pid used (NaN where /proc is missing): was a server CPU-bound? */
  cpu: number[];
  /** Share of the time this process's event loop was busy, and its delay p99 in ms: the load
   * generator must stay idle enough to time responses as they arrive. */
  busy: number;
  delayP99: number;
}

/** Starts measuring resource usage; the returned function stops and reports it. */
export function trackUsage(pids: readonly (number | undefined)[]): () => Usage {
  const before = pids.map(cpuSeconds);
  const started = performance.now();
  const idle = performance.eventLoopUtilization();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  return () => {
    loop.disable();
    const seconds = (performance.now() - started) / 1000;
    const used = (pid: number | undefined, i: number): number =>
      ((cpuSeconds(pid) ?? NaN) - (before[i] ?? NaN)) / seconds;
    return {
      cpu: pids.map(used),
      busy: performance.eventLoopUtilization(idle).utilization,
      delayP99: loop.percentile(99) / 1e6,
    };
  };
}

/** A field of Linux's /proc/<pid>/status in MB (VmRSS: resident now, VmHWM: peak); else NaN. */
export function memoryMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return NaN;
  }
}
