/**
 * Registration under concurrency: rounds of 2–12 simultaneous `set_desirabilities`, spread over
 * two production processes sharing Postgres (and Redis when one answers), racing for the same
 * new task ids with conflicting params. After each round the invariant is checked over HTTP:
 * every accepted job's task has its params, and the stored vote and the aggregate name each
 * task with the task's params. Violations must be 0.
 * Run: npm run bench:registration [-- --rounds 300 --seed 42] (or BENCH_RACE_ROUNDS, BENCH_RACE_SEED).
 */
import fc from 'fast-check';
import { benchFlags } from './support/flags';
import { benchAppEnv, benchValidatorKey } from './support/app-server';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase } from './support/database';
import { integerSetting, seedSetting, settingText } from './support/measure';
import { reachableRedisUrl } from './support/redis';
import { raceRound, runRaceRound } from './support/registration-race';
import { commandLine, formatInt, machineLine, progress } from './support/report';
import { startServiceProcess } from './support/service-process';

const { values: flags } = benchFlags({
  options: { rounds: { type: 'string' }, seed: { type: 'string' } },
});
const rounds = integerSetting('rounds', flags.rounds, 'BENCH_RACE_ROUNDS', 300);
const seed = seedSetting(settingText('seed', flags.seed, 'BENCH_RACE_SEED'));
async function main(): Promise<void> {
  const cleanup = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_registration');
    cleanup.push(database.release);
    const { env, masterKey } = benchAppEnv(database.url);
    const redis = await reachableRedisUrl();
    const shared = {
      ...env,
      ...(redis
        ? { REDIS_URL: redis, REDIS_KEY_PREFIX: `bench-registration-${process.pid}:` }
        : {}),
      // Every round registers up to 4 tasks: the per-hotkey limit is not what is measured.
      DESIRABILITY_MAX_ACTIVE_TASKS: '1000000',
    };
    const services = [await startServiceProcess(shared), await startServiceProcess(shared)];
    for (const service of services) cleanup.push(async () => void (await service.stop()));
    const urls = services.map((service) => service.url);
    const hotkey = benchValidatorKey().address;

    progress(`racing: ${rounds} rounds, seed ${seed}`);
    const totals = { rounds: 0, submissions: 0, accepted: 0, refused: 0 };
    const violations: string[] = [];
    const started = performance.now();
    const samples = fc.sample(
      fc.integer().chain(() => raceRound(0)),
      { numRuns: rounds, seed },
    );
    for (const [index, sample] of samples.entries()) {
      // Each round races for ids of its own.
      const race = {
        submissions: sample.submissions.map((submission) => ({
          ...submission,
          jobs: submission.jobs.map((job) => ({
            ...job,
            id: job.id.replace('race-0-', `race-${index}-`),
          })),
        })),
      };
      const outcome = await runRaceRound(urls, masterKey, hotkey, race);
      totals.rounds += 1;
      totals.submissions += outcome.submissions;
      totals.accepted += outcome.accepted;
      totals.refused += outcome.refused;
      violations.push(...outcome.violations.map((violation) => `round ${index}: ${violation}`));
    }
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      [
        '',
        'Registration race: concurrent set_desirabilities over two production processes',
        `command:  ${commandLine()}`,
        `machine:  ${machineLine()}`,
        `database: ${database.description}; Redis: ${redis ?? 'none'}`,
        `seed:     ${seed} (repeat with --seed ${seed} --rounds ${rounds})`,
        '',
        `rounds:      ${formatInt(totals.rounds)} in ${seconds.toFixed(1)} s`,
        `submissions: ${formatInt(totals.submissions)} (accepted ${formatInt(totals.accepted)}, refused 422 ${formatInt(totals.refused)})`,
        `violations:  ${violations.length} (0 expected)`,
        ...violations.slice(0, 10).map((violation) => `violation:   ${violation}`),
        '',
      ].join('\n'),
    );
    process.exitCode = violations.length === 0 ? 0 : 1;
  } finally {
    await cleanup.run();
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:registration failed: ${message}\n`);
  process.exit(1);
});
