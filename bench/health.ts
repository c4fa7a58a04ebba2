/**
 * Throughput of GET /api/v1/health on the service as deployed (validator key, Redis-backed rate
 * limits when a Redis answers, one `info` log line per request) beside floors returning the same
 * JSON: a bare node:http server, and a bare Nest route on the service's Express adapter
 * (ExpressServerAdapter), the floor of the target; and, for reference, the same route on Nest's
 * stock Express adapter; the least path: the same bare route behind the plainest code that
 * does what the target counts as the full path (least-path.ts); and the lean path: the same
 * again with the least work we found, the count exact across replicas in Redis (lean-path.ts);
 * and the lean path in guards: the lean path's work in the service's structure (request scope,
 * key check and count in Nest's global guards), what that structure costs by itself.
 * Also the service's resident memory, idle and after the load.
 * Run: npm run bench:health [-- --seconds 5 --connections 10 --rounds 3 --warmup 2 --idle 60 --profile]
 * (or BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS, BENCH_WARMUP_SECONDS, BENCH_IDLE_SECONDS).
 * The service runs as `node dist-dev/src/main.js` (main.ts, the production entry point, compiled
 * by `npm run build:dev` beside the benchmark); the floors run as children of this script
 * (--serve-node / --serve-nest / --serve-stock-nest / --serve-least-path / --serve-lean-path /
 * --serve-lean-guards). --profile writes V8 CPU profiles (`node --cpu-prof`) of the service, the
 * bare Nest floor and the three paths, and prints where and how much CPU each was busy per
 * response over the measured rounds.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchFlags } from './support/flags';
import type { HealthResponseDto } from '../src/modules/health/dto/health-response.dto';
import {
  BENCH_APP_SETTINGS,
  benchAppEnv,
  createApiKey,
  deactivateApiKey,
} from './support/app-server';
import { serveBareNest } from './support/bare-nest';
import { leanPath, leanPathEnv, leanPathSettings } from './support/lean-path';
import { leastPath, leastPathEnv, leastPathSettings } from './support/least-path';
import {
  ChildServer,
  fixedResponseEnv,
  forkServer,
  serveFixedResponse,
} from './support/child-server';
import { cleanupOnExit } from './support/cleanup';
import { busyMicros, ClockSpan, monotonicMicros } from './support/cpu-profile';
import { acquireDatabase } from './support/database';
import {
  LoadOptions,
  LoadTarget,
  loadOptions,
  measure,
  median,
  memoryMb,
  numberSetting,
  probe,
  Round,
  summarize,
  trackUsage,
} from './support/measure';
import { reachableRedisUrl } from './support/redis';
import { commandLine, formatInt, formatMs, machineLine, progress, table } from './support/report';
import { startServiceProcess } from './support/service-process';

const HEALTH_PATH = '/api/v1/health';
const TARGETS = [
  'bare node',
  'stock Nest',
  'bare Nest',
  'least path',
  'lean path',
  'lean in guards',
  'service',
] as const;
type Target = (typeof TARGETS)[number];
/**
 * The targets of issue 14: the service at ≥ 80 % of the bare Nest route on the same Express
 * adapter, idle in ≤ 150 MB.
 */
const TARGET_SHARE_OF_NEST = 0.8;
const TARGET_IDLE_RSS_MB = 150;

const { values: flags } = benchFlags({
  options: {
    'serve-node': { type: 'boolean' },
    'serve-nest': { type: 'boolean' },
    'serve-stock-nest': { type: 'boolean' },
    'serve-least-path': { type: 'boolean' },
    'serve-lean-path': { type: 'boolean' },
    'serve-lean-guards': { type: 'boolean' },
    profile: { type: 'boolean' },
    idle: { type: 'string' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    rounds: { type: 'string' },
  },
});

/** Fails unless the body is exactly a healthy HealthResponse (same fields, same types). */
function assertHealthResponse(text: string): void {
  const body = JSON.parse(text) as Record<string, unknown>;
  const types: Record<keyof HealthResponseDto, string> = {
    status: 'string',
    timestamp: 'string',
    miners_available: 'number',
    version: 'string',
    netuid: 'number',
    hotkey: 'string',
    network: 'string',
  };
  const sameKeys = Object.keys(body).sort().join() === Object.keys(types).sort().join();
  // `network` is null until a metagraph has been read.
  const typed = Object.entries(types).every(
    ([key, type]) => typeof body[key] === type || (key === 'network' && body[key] === null),
  );
  if (!sameKeys || !typed) throw new Error(`service: not a HealthResponse: ${text}`);
  if (body.status !== 'healthy') throw new Error(`service: reports itself unhealthy: ${text}`);
}

/** What the run found besides the rounds, for the report. */
interface Findings {
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
interface Profile {
  target: Target;
  dir: string;
  microsPerResponse: number;
}

/** The targets `--profile` profiles: the service, the floor it is judged by, the three paths. */
const PROFILED: readonly Target[] = [
  'service',
  'bare Nest',
  'least path',
  'lean path',
  'lean in guards',
];

/**
 * Seconds the service stays idle after start-up before its RSS is read: start-up grows V8's
 * young generation to its maximum (about 30 MB), and V8's memory reducer gives it back once the
 * process has been idle for a while (about 40 s here); idle means after that.
 */
const idleSeconds = numberSetting(
  flags.idle ?? process.env.BENCH_IDLE_SECONDS,
  'BENCH_IDLE_SECONDS',
  60,
  false,
  true,
);

async function benchmark(options: LoadOptions): Promise<void> {
  // Undone in reverse order: floors, bench key, service, log file, then the database.
  const cleanups = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_health');
    cleanups.push(database.release);
    progress(`database: ${database.description}`);
    const redis = await reachableRedisUrl();
    const { env, masterKey } = benchAppEnv(database.url);
    Object.assign(env, {
      // As deployed: one line per request at `info`, rate limits shared through Redis.
      LOG_LEVEL: 'info',
      ...(redis ? { REDIS_URL: redis, REDIS_KEY_PREFIX: `bench-health-${process.pid}:` } : {}),
    });
    if (!redis) delete env.REDIS_URL;
    const scratch = mkdtempSync(join(tmpdir(), 'bench-health-'));
    cleanups.push(() => Promise.resolve(rmSync(scratch, { recursive: true, force: true })));
    const logFile = join(scratch, 'service.log');
    const log = openSync(logFile, 'w');
    const profileRoot = flags.profile ? mkdtempSync(join(tmpdir(), 'bench-health-profile-')) : '';
    const profileDir = (target: Target): string =>
      join(profileRoot, target.replaceAll(' ', '-').toLowerCase());
    const profileArgs = (target: Target): string[] =>
      profileRoot && PROFILED.includes(target)
        ? ['--cpu-prof', `--cpu-prof-dir=${profileDir(target)}`]
        : [];
    const service = await startServiceProcess(env, {
      stdout: log,
      nodeArgs: profileArgs('service'),
    });
    closeSync(log);
    let serviceStopped = false;
    cleanups.push(async () => void (serviceStopped || (await service.stop())));
    const key = await createApiKey(service.url, masterKey, 'bench', 'validator');
    if (database.persistent) cleanups.push(() => deactivateApiKey(service.url, masterKey, key.id));

    const serviceTarget: LoadTarget = {
      url: `${service.url}${HEALTH_PATH}`,
      headers: { 'X-API-Key': key.key },
    };
    const first = await probe(serviceTarget);
    if (first.status !== 200) throw new Error(`service: ${first.status} ${first.text}`);
    if (!first.contentType.startsWith('application/json')) {
      throw new Error(`service: content-type ${first.contentType}`);
    }
    assertHealthResponse(first.text);
    const started = memoryMb(service.child.pid);
    progress(`idle: ${idleSeconds} s, RSS ${started.toFixed(0)} MB after start-up`);
    await sleep(idleSeconds * 1000);
    const idle = memoryMb(service.child.pid);

    // The floors answer with this very body and content type, so all send the same payload.
    const floorEnv = fixedResponseEnv(first.text, first.contentType);
    // The service's key and budget; each path writes its request lines to a file of its own.
    const pathEnv = (logName: string): NodeJS.ProcessEnv =>
      leastPathEnv({
        apiKey: key.key,
        limit: Number(BENCH_APP_SETTINGS.RATE_LIMIT_VALIDATOR),
        windowSeconds: Number(BENCH_APP_SETTINGS.RATE_LIMIT_WINDOW_SECONDS),
        logFile: join(scratch, logName),
      });
    const pathEnvs: Partial<Record<Target, NodeJS.ProcessEnv>> = {
      'least path': pathEnv('least-path.log'),
      'lean path': {
        ...pathEnv('lean-path.log'),
        // Its own count, beside the service's: the two are measured apart, not against one budget.
        ...leanPathEnv(redis, `bench-health-${process.pid}-${key.id}`),
      },
      'lean in guards': {
        ...pathEnv('lean-guards.log'),
        ...leanPathEnv(redis, `bench-health-guards-${process.pid}-${key.id}`),
      },
    };
    const targets = { service: serviceTarget } as Record<Target, LoadTarget>;
    const pids = { service: service.child.pid } as Record<Target, number | undefined>;
    const floors = {} as Record<Target, ChildServer>;
    for (const [target, flag] of [
      ['bare node', '--serve-node'],
      ['stock Nest', '--serve-stock-nest'],
      ['bare Nest', '--serve-nest'],
      ['least path', '--serve-least-path'],
      ['lean path', '--serve-lean-path'],
      ['lean in guards', '--serve-lean-guards'],
    ] as const) {
      const path = pathEnvs[target];
      const env = { ...floorEnv, ...path };
      const floor = await forkServer(__filename, [flag], env, 20_000, profileArgs(target));
      cleanups.push(floor.stop);
      floors[target] = floor;
      targets[target] = {
        url: `${floor.url}${HEALTH_PATH}`,
        headers: path ? serviceTarget.headers : {},
      };
      pids[target] = floor.child.pid;
      const echo = await probe(targets[target]);
      if (echo.status !== 200 || echo.text !== first.text || echo.contentType !== first.contentType)
        throw new Error(`${target}: differs: ${echo.status} ${echo.contentType} ${echo.text}`);
      // The two paths send every header the service sends, so all write the same bytes.
      if (path && echo.headerNames.join() !== first.headerNames.join())
        throw new Error(
          `${target}: headers differ: ${echo.headerNames.join()} vs the service's ${first.headerNames.join()}`,
        );
    }

    const load = await loadRounds(targets, pids, options);
    const afterLoad = memoryMb(service.child.pid);
    const peak = memoryMb(service.child.pid, 'VmHWM');
    // Stopped here so that its log is complete (and its CPU profile written).
    serviceStopped = true;
    await service.stop();
    if (profileRoot)
      for (const target of PROFILED) if (target !== 'service') await floors[target].stop();
    const logLines = countRequestLines(logFile);
    const profiles = profileRoot
      ? PROFILED.map((target) => ({
          target,
          dir: profileDir(target),
          microsPerResponse:
            busyMicros(profileDir(target), load.spans[target]) / load.roundResponses[target],
        }))
      : [];
    report(options, load.rounds, {
      database: database.description,
      redis,
      bodyBytes: Buffer.byteLength(first.text),
      rss: { started, idle, afterLoad, peak },
      idleSeconds,
      logLines,
      cpu: load.cpu,
      // The load's and the probe's.
      responses: load.serviceResponses + 1,
      profiles,
    });
  } finally {
    await cleanups.run();
  }
}

/** A warm-up per target, then rounds alternating targets: slow drifts of the machine hit all. */
async function loadRounds(
  targets: Record<Target, LoadTarget>,
  pids: Record<Target, number | undefined>,
  options: LoadOptions,
): Promise<{
  rounds: Record<Target, Round[]>;
  /** The service's responses, warm-up included (each wrote a log line). */
  serviceResponses: number;
  cpu: Record<Target, number[]>;
  /** When each target's measured rounds ran, and how many responses they had. */
  spans: Record<Target, ClockSpan[]>;
  roundResponses: Record<Target, number>;
}> {
  let serviceWarmUpResponses = 0;
  for (const target of TARGETS) {
    progress(`warm-up ${target}: ${options.warmupSeconds} s`);
    const warmUp = await measure(
      `warm-up ${target}`,
      targets[target],
      options.warmupSeconds,
      options.connections,
    );
    if (target === 'service') serviceWarmUpResponses += warmUp.responses;
  }
  const rounds = perTarget<Round>();
  const cpu = perTarget<number>();
  const spans = perTarget<ClockSpan>();
  const roundResponses = Object.fromEntries(TARGETS.map((t) => [t, 0])) as Record<Target, number>;
  for (let index = 1; index <= options.rounds; index += 1) {
    for (const target of TARGETS) {
      const name = `round ${index}/${options.rounds} ${target}`;
      const usage = trackUsage([pids[target]]);
      const start = monotonicMicros();
      const round = await measure(name, targets[target], options.seconds, options.connections);
      spans[target].push({ start, end: monotonicMicros() });
      rounds[target].push(round);
      roundResponses[target] += round.responses;
      cpu[target].push(usage().cpu[0]);
      progress(
        `${name}: ${formatInt(round.rps)} req/s, p50 ${formatMs(round.p50)} ms, p99 ${formatMs(round.p99)} ms`,
      );
    }
  }
  const serviceResponses = serviceWarmUpResponses + roundResponses.service;
  return { rounds, serviceResponses, cpu, spans, roundResponses };
}

/** An empty list per target. */
function perTarget<T>(): Record<Target, T[]> {
  return Object.fromEntries(TARGETS.map((target) => [target, [] as T[]])) as Record<Target, T[]>;
}

/** The service's per-request log lines for the benchmarked route: real pino JSON lines. */
function countRequestLines(file: string): number {
  let count = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes(`"msg":"GET ${HEALTH_PATH} 200 `)) continue;
    JSON.parse(line);
    count += 1;
  }
  return count;
}

function report(options: LoadOptions, rounds: Record<Target, Round[]>, found: Findings): void {
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
    ...TARGETS.flatMap((target) => driftWarning(target, rounds[target])),
    // Each path is the bare route plus work: faster than it only when the floor's run was
    // disturbed, which makes every ratio against it wrong.
    ...(['least path', 'lean path', 'lean in guards'] as const)
      .filter((path) => summary[path].rps > summary['bare Nest'].rps)
      .map((path) => `warning:  the ${path} outran bare Nest: the floor was disturbed; run again`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

/**
 * Medians hide a trend: a rate that keeps falling round after round means a per-request cost
 * grows during the run, and then the result depends on how long the benchmark ran.
 */
function driftWarning(target: Target, rounds: Round[]): string[] {
  const first = rounds[0]?.rps ?? 0;
  const last = rounds[rounds.length - 1]?.rps ?? 0;
  const falling = rounds.every((round, i) => i === 0 || round.rps < rounds[i - 1].rps);
  if (rounds.length < 2 || !falling || last > 0.85 * first) return [];
  return [
    `warning:  ${target} req/s fell ${(100 * (1 - last / first)).toFixed(0)}% from round 1 to ${rounds.length}: ` +
      'a per-request cost grows during the run',
  ];
}

async function main(): Promise<void> {
  if (flags['serve-node']) return serveFixedResponse();
  if (flags['serve-nest']) return serveBareNest('service');
  if (flags['serve-stock-nest']) return serveBareNest('stock');
  if (flags['serve-least-path'])
    return serveBareNest('service', leastPath(leastPathSettings()).middleware);
  if (flags['serve-lean-path'])
    return serveBareNest('service', leanPath(leanPathSettings()).middleware);
  if (flags['serve-lean-guards']) {
    const lean = leanPath(leanPathSettings(), true);
    return serveBareNest('service', lean.middleware, lean.guards);
  }
  await benchmark(loadOptions(flags));
  // Explicit exit: a lingering handle (pg pool, keep-alive socket) must not hang the run.
  process.exit(0);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:health failed: ${message}\n`);
  process.exit(1);
});
