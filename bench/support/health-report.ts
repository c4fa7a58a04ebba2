import { BENCH_APP_SETTINGS } from './app-server';
import { LoadOptions, median, Round, summarize } from './measure';
import { driftWarnings, outranWarnings } from './health-warnings';
import { HEALTH_PATH, Target, TARGETS } from './health-targets';
import {
  commandLine,
  formatInt,
  formatMs,
  formatPercent,
  machineLine,
  table,
  Verdict,
} from './report';

// bench:health's report (bench/health.ts runs the targets).

/**
 * The targets of issue 14: the service at ≥ 80 % of the bare Nest route on the same Express
 * adapter, idle in ≤ 150 MB.
 */
const TARGET_SHARE_OF_NEST = 0.8;
const TARGET_IDLE_RSS_MB = 150;

/** What the run found besides the rounds, for the report. */
export interface Findings {
  database: string;
  redis: string | undefined;
  bodyBytes: number;
  rss: { started: number; idle: number; afterLoad: number; peak: number };
  idleSeconds: number;
  logLines: number;
  /** Share of one core the server used during each of its rounds. */
  cpu: Record<Target, number[]>;
  /** Share of one core the load generator (this process) used during each target's rounds. */
  clientCpu: Record<Target, number[]>;
  /** The Node flags every server ran with (the benchmark's own, then `--cpu-prof`'s). */
  nodeFlags: string[];
  responses: number;
  profiles: Profile[];
}

/** Where `--profile` wrote a target's CPU profile, and its busy CPU per response in the rounds. */
export interface Profile {
  target: Target;
  dir: string;
  microsPerResponse: number;
}

/** A ratio taken round by round: its median and the smallest and largest round's. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/**
 * `over[i] / under[i]` for each round i: their median and range. Both numbers of a ratio come
 * from one round: the rounds interleave the targets so that the machine's drifts hit both
 * alike, and a ratio of two medians could pair one target's round 2 with the other's round 3 (a
 * methods audit saw 0.971 "within 80 %" printed where the rounds' own ratios were 0.718, 0.728
 * and 1.020).
 */
export function pairedRatio(over: readonly number[], under: readonly number[]): Spread {
  if (over.length !== under.length) throw new Error('paired ratio of unequal rounds');
  const ratios = over.map((value, i) => value / under[i]);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/** `0.455 (rounds 0.455–0.709)`. */
export function formatSpread({ median: middle, min, max }: Spread): string {
  return `${middle.toFixed(3)} (rounds ${min.toFixed(3)}–${max.toFixed(3)})`;
}

/**
 * MET when every round's ratio reaches `share`, MISSED when none does, UNDECIDED when the rounds
 * fall on both sides of it: noise then decides, and another run (or more rounds) is what helps.
 */
export function verdict({ min, max }: Spread, share: number): Verdict {
  if (min >= share) return 'MET';
  return max < share ? 'MISSED' : 'UNDECIDED';
}

/** Prints the table, the ratios and the targets' verdicts of a run. */
export function report(
  options: LoadOptions,
  rounds: Record<Target, Round[]>,
  found: Findings,
): void {
  process.stdout.write(reportLines(options, rounds, found).join('\n'));
}

/** The report's lines (report prints them). */
export function reportLines(
  options: LoadOptions,
  rounds: Record<Target, Round[]>,
  found: Findings,
): string[] {
  const summary = Object.fromEntries(TARGETS.map((t) => [t, summarize(rounds[t])])) as Record<
    Target,
    Round
  >;
  const rows = [
    [
      'target',
      'req/s (median)',
      'p50 ms',
      'p99 ms',
      'server CPU',
      'CPU µs/response',
      'client CPU',
      'bytes/response',
      'req/s per round',
    ],
  ];
  const rps = (target: Target): number[] => rounds[target].map((round) => round.rps);
  // CPU time per response moves less with the machine's noise than req/s does: each round's
  // server CPU (every thread, from /proc) over its responses.
  const cpuMicros = (target: Target): number[] =>
    found.cpu[target].map((share, i) => (1e6 * share) / rounds[target][i].rps);
  for (const target of TARGETS) {
    const s = summary[target];
    rows.push([
      target,
      formatInt(s.rps),
      formatMs(s.p50),
      formatMs(s.p99),
      `${(100 * median(found.cpu[target])).toFixed(0)} %`,
      median(cpuMicros(target)).toFixed(1),
      `${(100 * median(found.clientCpu[target])).toFixed(0)} %`,
      formatInt(s.bytesPerResponse),
      rps(target)
        .map((value) => formatInt(value))
        .join(' / '),
    ]);
  }
  const byRps = (over: Target, under: Target): Spread => pairedRatio(rps(over), rps(under));
  // Bare Nest's CPU time over the target's: the share of the floor's rate its CPU would allow.
  const byCpu = (target: Target): string =>
    formatSpread(pairedRatio(cpuMicros('bare Nest'), cpuMicros(target)));
  const share = byRps('service', 'bare Nest');
  const leanShare = byRps('lean path', 'bare Nest');
  const guardsShare = byRps('lean in guards', 'bare Nest');
  const within = (ratio: Spread): string =>
    ({ MET: 'within', MISSED: 'beyond', UNDECIDED: 'on both sides of' })[
      verdict(ratio, TARGET_SHARE_OF_NEST)
    ] + ` ${100 * TARGET_SHARE_OF_NEST} %`;
  const { started, idle, afterLoad, peak } = found.rss;
  const settings = Object.entries(BENCH_APP_SETTINGS)
    .filter(([name]) => name !== 'LOG_LEVEL')
    .map(([name, value]) => `${name}=${value}`);
  const client = median(TARGETS.flatMap((target) => found.clientCpu[target]));
  return [
    '',
    `GET ${HEALTH_PATH}: the service (validator key) vs a bare Nest route vs bare node:http, same ${found.bodyBytes}-byte JSON body`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}`,
    `load:     autocannon in this process on 127.0.0.1, ${options.connections} connections, ${options.warmupSeconds} s warm-up ` +
      `per target, then ${options.rounds} rounds of ${options.seconds} s alternating the targets, each round starting one ` +
      'place later (bare Nest and the service side by side); ratios taken round by round, their median and range',
    `node:     every server ${found.nodeFlags.length ? `with ${found.nodeFlags.join(' ')}` : 'without flags'}, NODE_ENV=production`,
    `service:  node dist-dev/src/main.js, LOG_LEVEL=info ${settings.join(' ')}`,
    `          full path: helmet, request id, metrics, key check (cached), throttler, access guard, ` +
      `one pino line per request`,
    `          throttler: ${found.redis ? `Redis (${found.redis}), as deployed` : 'in memory (no Redis answered on REDIS_URL or 127.0.0.1:6379)'}; ` +
      `RATE_LIMIT_VALIDATOR=${BENCH_APP_SETTINGS.RATE_LIMIT_VALIDATOR}: measures throughput, not the 1000/hour budget`,
    `          log: ${formatInt(found.logLines)} request lines written (JSON, to a file) for ${formatInt(found.responses)} responses ` +
      '(autocannon leaves out the requests still in flight when each run ends; the service logs those too)',
    `bare Nest: NestFactory.create on the service's Express adapter (ExpressServerAdapter), one GET route, no body parser, middleware or guards`,
    `stock Nest: the same on Nest's own ExpressAdapter (for reference: what the adapter saves)`,
    `least path: bare Nest behind one middleware doing the least the full path needs (key digest in a map, window count in a map, ` +
      `request id, the service's headers, counter + histogram, one pino line to a buffered file): the plainest way, with the service's libraries`,
    `lean path: the same with the least work we found: the count in ${found.redis ? 'Redis, exact across replicas' : 'memory (no Redis answered)'} ` +
      `(the service's own storage), counts and histogram in arrays, the JSON line built by hand; whether 80 % is reachable at all`,
    `lean in guards: the lean path's work in the service's structure: each request in the request scope (nestjs-pino's ` +
      `AsyncLocalStorage), the key check, the count and a privilege check as three global Nest guards`,
    `database: ${found.database}`,
    '',
    table(rows),
    '',
    `least path/bare Nest: req/s ${formatSpread(byRps('least path', 'bare Nest'))} ` +
      `(what the full path's behaviours cost, done the plainest way); service/least path: req/s ` +
      `${formatSpread(byRps('service', 'least path'))} (what the service's way of doing them, and what it does besides, costs)`,
    `lean path/bare Nest: req/s ${formatSpread(leanShare)} (the target's behaviours with the least work we found: ` +
      `${within(leanShare)}); service/lean path: req/s ${formatSpread(byRps('service', 'lean path'))}`,
    `lean in guards/bare Nest: req/s ${formatSpread(guardsShare)} (the same in the service's structure: ${within(guardsShare)}); ` +
      `service/lean in guards: req/s ${formatSpread(byRps('service', 'lean in guards'))}`,
    `by CPU time per response (bare Nest's over each one's; steadier than req/s on a busy machine): lean path ` +
      `${byCpu('lean path')}, lean in guards ${byCpu('lean in guards')}, service ${byCpu('service')}`,
    `service/bare Nest: req/s ${formatSpread(share)}; service/stock Nest: req/s ` +
      `${formatSpread(byRps('service', 'stock Nest'))}; service/bare node: req/s ` +
      `${formatSpread(byRps('service', 'bare node'))}`,
    `service RSS: idle ${idle.toFixed(0)} MB (${found.idleSeconds} s after start-up, before load; ` +
      `${started.toFixed(0)} MB right after start-up), ${afterLoad.toFixed(0)} MB right after the load, ` +
      `peak ${peak.toFixed(0)} MB`,
    `service ≥ ${100 * TARGET_SHARE_OF_NEST} % of bare Nest (same adapter, round by round): ${verdict(share, TARGET_SHARE_OF_NEST)} ` +
      `(${(100 * share.median).toFixed(1)} %; rounds ${(100 * share.min).toFixed(1)}–${(100 * share.max).toFixed(1)} %)`,
    `idle RSS ≤ ${TARGET_IDLE_RSS_MB} MB: ${idle <= TARGET_IDLE_RSS_MB ? 'MET' : 'MISSED'} (${idle.toFixed(0)} MB)`,
    ...found.profiles.map(
      ({ target, dir, microsPerResponse }) =>
        `CPU profile of ${target}: ${dir}; main thread busy (wall time not idle, not CPU time) ` +
        `${microsPerResponse.toFixed(1)} µs per response in the rounds`,
    ),
    ...driftWarnings(rounds),
    ...outranWarnings(rounds),
    ...(client > CLIENT_CPU_WARNING
      ? [
          `warning:  the load generator used ${formatPercent(client)} of a core (median of its rounds): it may hold ` +
            'the rates down more than the servers do; read the CPU-time ratios, or run with fewer other processes',
        ]
      : []),
    '',
  ];
}

/**
 * The load generator's share of a core beyond which it may be what limits the rates: it runs in
 * this process, beside the servers, on the same cores.
 */
const CLIENT_CPU_WARNING = 0.8;
