/**
 * Throughput of GET /api/v1/health on the real service (validator key) beside a bare node:http
 * server returning the same JSON, so that the cost of the framework shows as a ratio.
 * Run: npm run bench:health [-- --seconds 5 --connections 10 --rounds 3 --warmup 2]
 * (or BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS, BENCH_WARMUP_SECONDS).
 * The servers run as children of this script (--serve-app / --serve-bare).
 */
import { parseArgs } from 'node:util';
import type { HealthResponseDto } from '../src/modules/health/dto/health-response.dto';
import {
  BENCH_APP_SETTINGS,
  benchAppEnv,
  createApiKey,
  deactivateApiKey,
  serveApp,
} from './support/app-server';
import { fixedResponseEnv, forkServer, serveFixedResponse } from './support/child-server';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase } from './support/database';
import {
  LoadOptions,
  LoadTarget,
  loadOptions,
  measure,
  probe,
  Round,
  summarize,
} from './support/measure';
import { commandLine, formatInt, formatMs, machineLine, progress, table } from './support/report';

const HEALTH_PATH = '/api/v1/health';
const TARGETS = ['bare', 'app'] as const;
type Target = (typeof TARGETS)[number];

const { values: flags } = parseArgs({
  options: {
    'serve-app': { type: 'boolean' },
    'serve-bare': { type: 'boolean' },
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
  if (!sameKeys || !typed) throw new Error(`app: not a HealthResponse: ${text}`);
  if (body.status !== 'healthy') throw new Error(`app: reports itself unhealthy: ${text}`);
}

async function benchmark(options: LoadOptions): Promise<void> {
  // Undone in reverse order: bare server, bench key, app, then the database the app was using.
  const cleanups = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_health');
    cleanups.push(database.release);
    progress(`database: ${database.description}`);
    const { env, masterKey } = benchAppEnv(database.url);
    const app = await forkServer(__filename, ['--serve-app'], env, 60_000);
    cleanups.push(app.stop);
    const key = await createApiKey(app.url, masterKey, 'bench', 'validator');
    if (database.persistent) cleanups.push(() => deactivateApiKey(app.url, masterKey, key.id));

    const appTarget: LoadTarget = {
      url: `${app.url}${HEALTH_PATH}`,
      headers: { 'X-API-Key': key.key },
    };
    const first = await probe(appTarget);
    if (first.status !== 200) throw new Error(`app: ${first.status} ${first.text}`);
    if (!first.contentType.startsWith('application/json')) {
      throw new Error(`app: content-type ${first.contentType}`);
    }
    assertHealthResponse(first.text);
    // The bare server replays this very body and content type, so both send the same payload.
    const bareEnv = fixedResponseEnv(first.text, first.contentType);
    const bare = await forkServer(__filename, ['--serve-bare'], bareEnv, 10_000);
    cleanups.push(bare.stop);
    const targets: Record<Target, LoadTarget> = {
      bare: { url: `${bare.url}${HEALTH_PATH}`, headers: {} },
      app: appTarget,
    };
    const echo = await probe(targets.bare);
    if (echo.status !== 200 || echo.text !== first.text || echo.contentType !== first.contentType) {
      throw new Error(
        `bare: does not mirror the app: ${echo.status} ${echo.contentType} ${echo.text}`,
      );
    }

    for (const target of TARGETS) {
      progress(`warm-up ${target}: ${options.warmupSeconds} s`);
      await measure(
        `warm-up ${target}`,
        targets[target],
        options.warmupSeconds,
        options.connections,
      );
    }
    // Alternating targets spreads slow drifts of the machine (thermal, neighbours) over both.
    const rounds: Record<Target, Round[]> = { bare: [], app: [] };
    for (let index = 1; index <= options.rounds; index += 1) {
      for (const target of TARGETS) {
        const name = `round ${index}/${options.rounds} ${target}`;
        const round = await measure(name, targets[target], options.seconds, options.connections);
        rounds[target].push(round);
        progress(
          `${name}: ${formatInt(round.rps)} req/s, p50 ${formatMs(round.p50)} ms, p99 ${formatMs(round.p99)} ms`,
        );
      }
    }
    report(options, database.description, Buffer.byteLength(first.text), rounds);
  } finally {
    await cleanups.run();
  }
}

function report(
  options: LoadOptions,
  database: string,
  bodyBytes: number,
  rounds: Record<Target, Round[]>,
): void {
  const bare = summarize(rounds.bare);
  const app = summarize(rounds.app);
  const rows = [
    [
      'target',
      'req/s (median)',
      'p50 ms',
      'p99 ms',
      'non-2xx',
      'bytes/response',
      'req/s per round',
    ],
  ];
  for (const [target, s] of [
    ['bare', bare],
    ['app', app],
  ] as const) {
    const perRound = rounds[target].map((r) => formatInt(r.rps)).join(' / ');
    const cells = [formatInt(s.rps), formatMs(s.p50), formatMs(s.p99), String(s.non2xx)];
    rows.push([target, ...cells, formatInt(s.bytesPerResponse), perRound]);
  }
  const settings = Object.entries(BENCH_APP_SETTINGS).map(([name, value]) => `${name}=${value}`);
  const lines = [
    '',
    `GET ${HEALTH_PATH}: NestJS service (validator key) vs bare node:http, same ${bodyBytes}-byte JSON body`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}`,
    `load:     autocannon on 127.0.0.1, ${options.connections} connections, ${options.warmupSeconds} s warm-up ` +
      `per target, then ${options.rounds} rounds of ${options.seconds} s alternating bare/app; medians over rounds`,
    `app:      ${settings.join(' ')}`,
    `          LOG_LEVEL=${BENCH_APP_SETTINGS.LOG_LEVEL}: no per-request log lines; ` +
      `RATE_LIMIT_VALIDATOR=${BENCH_APP_SETTINGS.RATE_LIMIT_VALIDATOR}: measures throughput, not the 1000/hour budget`,
    `          throttler: ${process.env.REDIS_URL ? 'Redis (REDIS_URL)' : 'in memory'}, ` +
      `RATE_LIMIT_WINDOW_SECONDS=${BENCH_APP_SETTINGS.RATE_LIMIT_WINDOW_SECONDS} (bounds the throttler's per-key hit list)`,
    `database: ${database}`,
    '',
    table(rows),
    '',
    `app/bare: req/s ${(app.rps / bare.rps).toFixed(3)} (the app serves ${((100 * app.rps) / bare.rps).toFixed(1)}% ` +
      `of the bare server's rate), p50 ${formatMs(app.p50)} vs ${formatMs(bare.p50)} ms, ` +
      `p99 ${formatMs(app.p99)} vs ${formatMs(bare.p99)} ms`,
    ...TARGETS.flatMap((target) => driftWarning(target, rounds[target])),
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

/**
 * Medians hide a trend: a rate that keeps falling round after round means a per-request cost
 * grows during the run (seen with the in-memory throttler, which keeps one timestamp per hit
 * for the whole window), and then the result depends on how long the benchmark ran.
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
  if (flags['serve-app']) return serveApp();
  if (flags['serve-bare']) return serveFixedResponse();
  await benchmark(loadOptions(flags));
  // Explicit exit: a lingering handle (pg pool, keep-alive socket) must not hang the run.
  process.exit(0);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:health failed: ${message}\n`);
  process.exit(1);
});
