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
 * response over the measured rounds. The interleaved rounds: support/health-rounds.ts; the table,
 * ratios and verdicts: support/health-report.ts.
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
import { busyMicros } from './support/cpu-profile';
import { acquireDatabase } from './support/database';
import {
  LoadOptions,
  LoadTarget,
  loadOptions,
  memoryMb,
  numberSetting,
  settingText,
  probe,
} from './support/measure';
import { reachableRedisUrl } from './support/redis';
import { progress } from './support/report';
import { startServiceProcess } from './support/service-process';
import { report } from './support/health-report';
import { HEALTH_PATH, Target } from './support/health-targets';
import { loadRounds } from './support/health-rounds';

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
  // `reason` is an unhealthy answer's alone.
  const types: Record<Exclude<keyof HealthResponseDto, 'reason'>, string> = {
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
  settingText('idle', flags.idle, 'BENCH_IDLE_SECONDS'),
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
      // The benchmark's own Node flags, as the floors have them (forked with them).
      nodeArgs: [...process.execArgv, ...profileArgs('service')],
    });
    closeSync(log);
    let serviceStopped = false;
    cleanups.push(async () => void (serviceStopped || (await service.stop())));
    const key = await createApiKey(service.url, masterKey, 'bench', 'validator');
    // Through the service, so while it runs: at the run's end before it stops, else at cleanup.
    let keyLive = database.persistent;
    const deactivateKey = async (): Promise<void> => {
      if (!keyLive) return;
      keyLive = false;
      await deactivateApiKey(service.url, masterKey, key.id);
    };
    cleanups.push(deactivateKey);

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

    // The floors answer with this very body and content type, so all send the same payload; they
    // run in production mode as the service does.
    const floorEnv = { ...fixedResponseEnv(first.text, first.contentType), NODE_ENV: 'production' };
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
    // Not the run's failure: the measurements are reported whatever this answers.
    await deactivateKey().catch((error: unknown) =>
      progress(`the bench key ${key.id} was not deactivated: ${String(error)}`),
    );
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
      clientCpu: load.clientCpu,
      nodeFlags: process.execArgv,
      // The load's and the probe's.
      responses: load.serviceResponses + 1,
      profiles,
    });
  } finally {
    await cleanups.run();
  }
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
