import { BENCH_APP_SETTINGS } from './app-server';
import { LoadOptions, median, Round, summarize } from './measure';
import { commandLine, formatInt, formatMs, formatPercent, machineLine, table } from './report';

// bench:health's targets and its report (bench/health.ts runs them).

export const HEALTH_PATH = '/api/v1/health';

/** The servers measured, in the order each round runs them. */
export const TARGETS = [
  'bare node',
  'stock Nest',
  'bare Nest',
  'least path',
  'lean path',
  'lean in guards',
  'service',
] as const;
export type Target = (typeof TARGETS)[number];

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
  responses: number;
  profiles: Profile[];
}

/** Where `--profile` wrote a target's CPU profile, and its busy CPU per response in the rounds. */
export interface Profile {
  target: Target;
  dir: string;
  microsPerResponse: number;
}

/** Prints the table, the ratios and the targets' verdicts of a run. */
export function report(
  options: LoadOptions,
  rounds: Record<Target, Round[]>,
  found: Findings,
): void {
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
      'bytes/response',
      'req/s per round',
    ],
  ];
  // CPU time per response moves less with the machine's noise than req/s does: each round's
  // server CPU (every thread, from /proc) over its responses, median over rounds.
  const cpuMicros = Object.fromEntries(
    TARGETS.map((target) => [
      target,
      median(found.cpu[target].map((share, i) => (1e6 * share) / rounds[target][i].rps)),
    ]),
  ) as Record<Target, number>;
  for (const target of TARGETS) {
    const s = summary[target];
    const perRound = rounds[target].map((r) => formatInt(r.rps)).join(' / ');
    rows.push([
      target,
      formatInt(s.rps),
      formatMs(s.p50),
      formatMs(s.p99),
      `${(100 * median(found.cpu[target])).toFixed(0)} %`,
      cpuMicros[target].toFixed(1),
      formatInt(s.bytesPerResponse),
      perRound,
    ]);
  }
  const share = summary.service.rps / summary['bare Nest'].rps;
  const leanShare = summary['lean path'].rps / summary['bare Nest'].rps;
  const guardsShare = summary['lean in guards'].rps / summary['bare Nest'].rps;
  const within = (ratio: number): string =>
    `${ratio >= TARGET_SHARE_OF_NEST ? 'within' : 'beyond'} ${100 * TARGET_SHARE_OF_NEST} %`;
  const { started, idle, afterLoad, peak } = found.rss;
  const met = (ok: boolean): string => (ok ? 'MET' : 'MISSED');
  const settings = Object.entries(BENCH_APP_SETTINGS)
    .filter(([name]) => name !== 'LOG_LEVEL')
    .map(([name, value]) => `${name}=${value}`);
  const lines = [
    '',
    `GET ${HEALTH_PATH}: the service (validator key) vs a bare Nest route vs bare node:http, same ${found.bodyBytes}-byte JSON body`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}`,
    `load:     autocannon on 127.0.0.1, ${options.connections} connections, ${options.warmupSeconds} s warm-up ` +
      `per target, then ${options.rounds} rounds of ${options.seconds} s alternating the targets; medians over rounds`,
    `service:  node dist-dev/src/main.js, LOG_LEVEL=info ${settings.join(' ')}`,
    `          full path: helmet, request id, metrics, key check (cached), throttler, access guard, ` +
      `one pino line per request`,
    `          throttler: ${found.redis ? `Redis (${found.redis}), as deployed` : 'in memory (no Redis answered on REDIS_URL or 127.0.0.1:6379)'}; ` +
      `RATE_LIMIT_VALIDATOR=${BENCH_APP_SETTINGS.RATE_LIMIT_VALIDATOR}: measures throughput, not the 1000/hour budget`,
    `          log: ${formatInt(found.logLines)} request lines written (JSON, to a file) for ${formatInt(found.responses)} responses`,
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
    `least path/bare Nest: req/s ${(summary['least path'].rps / summary['bare Nest'].rps).toFixed(3)} ` +
      `(what the full path's behaviours cost, done the plainest way); service/least path: req/s ` +
      `${(summary.service.rps / summary['least path'].rps).toFixed(3)} (what the service's way of doing them, and what it does besides, costs)`,
    `lean path/bare Nest: req/s ${leanShare.toFixed(3)} (the target's behaviours with the least work we found: ` +
      `${within(leanShare)}); service/lean path: req/s ${(summary.service.rps / summary['lean path'].rps).toFixed(3)}`,
    `lean in guards/bare Nest: req/s ${guardsShare.toFixed(3)} (the same in the service's structure: ${within(guardsShare)}); ` +
      `service/lean in guards: req/s ${(summary.service.rps / summary['lean in guards'].rps).toFixed(3)}`,
    `by CPU time per response (bare Nest's over each one's): lean path ` +
      `${(cpuMicros['bare Nest'] / cpuMicros['lean path']).toFixed(3)}, lean in guards ` +
      `${(cpuMicros['bare Nest'] / cpuMicros['lean in guards']).toFixed(3)}, service ` +
      `${(cpuMicros['bare Nest'] / cpuMicros.service).toFixed(3)}`,
    `service/bare Nest: req/s ${share.toFixed(3)}; service/stock Nest: req/s ` +
      `${(summary.service.rps / summary['stock Nest'].rps).toFixed(3)}; service/bare node: req/s ` +
      `${(summary.service.rps / summary['bare node'].rps).toFixed(3)}`,
    `service RSS: idle ${idle.toFixed(0)} MB (${found.idleSeconds} s after start-up, before load; ` +
      `${started.toFixed(0)} MB right after start-up), ${afterLoad.toFixed(0)} MB right after the load, ` +
      `peak ${peak.toFixed(0)} MB`,
    `service ≥ ${100 * TARGET_SHARE_OF_NEST} % of bare Nest (same adapter): ${met(share >= TARGET_SHARE_OF_NEST)} (${(100 * share).toFixed(1)} %)`,
    `idle RSS ≤ ${TARGET_IDLE_RSS_MB} MB: ${met(idle <= TARGET_IDLE_RSS_MB)} (${idle.toFixed(0)} MB)`,
    ...found.profiles.map(
      ({ target, dir, microsPerResponse }) =>
        `CPU profile of ${target}: ${dir}; main thread busy ${microsPerResponse.toFixed(1)} µs per response in the rounds`,
    ),
    ...driftWarnings(rounds),
    // Each path is the bare route plus work: faster than it only when the floor's run was
    // disturbed, which makes every ratio against it wrong.
    ...(['least path', 'lean path', 'lean in guards'] as const)
      .filter((path) => summary[path].rps > summary['bare Nest'].rps)
      .map((path) => `warning:  the ${path} outran bare Nest: the floor was disturbed; run again`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

/** How far a target may fall beyond bare node's fall and still be read as the machine's. */
const MACHINE_FALL_MARGIN = 0.1;

/**
 * Medians hide a trend: a rate that keeps falling round after round means either that a
 * per-request cost grows during the run (then the result depends on how long the benchmark ran)
 * or that the machine slowed. Bare node's work per request cannot grow, and the rounds alternate
 * the targets, so bare node's fall over the same rounds is the machine's: a target that fell no
 * further than it is not blamed for it. Three rounds cannot tell a growing cost from a burst
 * that hit one target's rounds only, so a fall beyond bare node's asks for another run too.
 */
export function driftWarnings(rounds: Record<Target, Round[]>): string[] {
  const machine = change(rounds['bare node']);
  return TARGETS.flatMap((target) => {
    const fell = steadyFall(rounds[target]);
    if (fell === undefined) return [];
    const head = `warning:  ${target} req/s fell ${formatPercent(fell)} from round 1 to ${rounds[target].length}`;
    if (target === 'bare node') {
      return [`${head}: its work per request cannot grow, so the machine slowed; run again`];
    }
    if (fell <= machine + MACHINE_FALL_MARGIN) {
      return [
        `${head}, as bare node's did (${formatPercent(machine)}): the machine slowed; run again`,
      ];
    }
    return [
      `${head}, bare node's ${machine < 0 ? 'rose' : 'fell'} ${formatPercent(Math.abs(machine))}: ` +
        'a per-request cost may grow during the run, or only its rounds were disturbed; run again',
    ];
  });
}

/**
 * The share lost from the first round to the last, when each round was slower than the one
 * before and 15 % or more was lost; otherwise undefined.
 */
function steadyFall(rounds: Round[]): number | undefined {
  const falling = rounds.every((round, i) => i === 0 || round.rps < rounds[i - 1].rps);
  const fell = change(rounds);
  return rounds.length >= 2 && falling && fell >= 0.15 ? fell : undefined;
}

/** The share lost from the first round to the last (negative when the last was faster). */
function change(rounds: Round[]): number {
  const first = rounds[0]?.rps ?? 0;
  const last = rounds[rounds.length - 1]?.rps ?? 0;
  return first > 0 ? 1 - last / first : 0;
}
