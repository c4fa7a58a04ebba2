/**
 * Property-based fuzzing of every operation in /openapi.json on the real service over a devnet:
 * random and schema-shaped bodies, wrong types, huge strings, unicode, deep nesting, odd
 * headers, paths and query strings, with keys of every kind. Each answer must be < 500, carry
 * X-Request-Id, have a status the operation documents, and a body valid against its schema.
 * Run: npm run bench:fuzz [-- --runs 10000 --seed 42] (or BENCH_FUZZ_RUNS, BENCH_FUZZ_SEED).
 * The service and the devnet run as children of this script (--serve-app, --serve-devnet).
 */
import { benchFlags } from './support/flags';
import { MinerBehaviour } from '../src/devnet/behaviour';
import { benchAppEnv, benchValidatorKey, serveApp } from './support/app-server';
import { forkServer } from './support/child-server';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase } from './support/database';
import { forkDevnet, serveDevnet } from './support/devnet-server';
import { FUZZ_APP_ENV, FuzzCampaign, FuzzResult } from './support/fuzz/campaign';
import { integerSetting, seedSetting, settingText } from './support/measure';
import { commandLine, machineLine, progress, table } from './support/report';

const text = { type: 'string' } as const;
const { values: flags } = benchFlags({
  options: {
    'serve-app': { type: 'boolean' },
    'serve-devnet': { type: 'boolean' },
    runs: text,
    seed: text,
  },
});
const runs = integerSetting('runs', flags.runs, 'BENCH_FUZZ_RUNS', 10_000);
const seed = seedSetting(settingText('seed', flags.seed, 'BENCH_FUZZ_SEED'));

async function fuzz(): Promise<{ result: FuzzResult; healthy: boolean; database: string }> {
  const cleanup = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_fuzz');
    cleanup.push(database.release);
    const behaviours: MinerBehaviour[] = [5, 10, 20, 30, 40].map((latencyMs) => ({ latencyMs }));
    const devnet = await forkDevnet(__filename, '--serve-devnet', behaviours, [
      benchValidatorKey().address,
    ]);
    cleanup.push(devnet.stop);
    const { env, masterKey } = benchAppEnv(database.url);
    Object.assign(env, FUZZ_APP_ENV, {
      METAGRAPH_FILE: devnet.metagraphFile,
      DEVNET_MINERS: '0',
      // Index rows for the stats endpoints and query_bucket to find.
      INDEX_SYNC_ON_START: 'true',
    });
    const app = await forkServer(__filename, ['--serve-app'], env, 60_000);
    cleanup.push(app.stop);
    const campaign = await FuzzCampaign.prepare(app.url, masterKey);
    cleanup.push(() => Promise.resolve(campaign.close()));
    progress(`fuzzing: ${runs} cases, seed ${seed}`);
    const result = await campaign.run({ numRuns: runs, seed, mode: 'collect' });
    // The process must have survived everything: alive, and answering a plain request.
    const health = await fetch(`${app.url}/api/v1/health`, { headers: { 'X-API-Key': masterKey } });
    const healthy = app.child.exitCode === null && health.status === 200;
    return { result, healthy, database: database.description };
  } finally {
    await cleanup.run();
  }
}

function report({ result, healthy, database }: Awaited<ReturnType<typeof fuzz>>): void {
  const byCount = (map: Map<string, number>) => [...map].sort(([a], [b]) => a.localeCompare(b));
  const lines = [
    '',
    `Fuzz: every operation of /openapi.json on the real service over a 5-miner devnet`,
    `command:  ${commandLine()}`,
    `machine:  ${machineLine()}`,
    `database: ${database}`,
    `seed:     ${seed} (repeat with --seed ${seed} --runs ${runs})`,
    '',
    table([
      ['cases per target', 'cases'],
      ...byCount(result.perTarget).map(([k, n]) => [k, String(n)]),
    ]),
    '',
    `statuses: ${byCount(result.statuses)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ')}`,
    `cases:    ${result.cases} in ${result.seconds.toFixed(1)} s (${(result.cases / result.seconds).toFixed(0)}/s)`,
    `failures: ${result.failures.length} (0 expected)`,
    `service:  ${healthy ? 'still up and healthy' : 'DOWN or unhealthy after the run'}`,
    ...result.failures
      .slice(0, 20)
      .map((f) => `failure:  #${f.index} ${f.problems.join('; ')}\n          ${f.request}`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

async function main(): Promise<void> {
  if (flags['serve-app']) return serveApp();
  if (flags['serve-devnet']) return serveDevnet();
  const outcome = await fuzz();
  report(outcome);
  process.exit(outcome.result.failures.length === 0 && outcome.healthy ? 0 : 1);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:fuzz failed: ${message}\n`);
  process.exit(1);
});
