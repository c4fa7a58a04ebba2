import { constants } from 'node:os';
import { progress } from './report';

export interface Cleanup {
  /** Registers an undo step; steps run in reverse order of registration. */
  push(step: () => Promise<void>): void;
  /** Runs every step once, even if some fail (each failure is reported); safe to call twice. */
  run(): Promise<void>;
}

/**
 * Undo steps for what a benchmark starts (database, server children, devnet), also run on
 * SIGINT/SIGTERM: Ctrl-C must not leave a throwaway database or a listening server behind.
 */
export function cleanupOnExit(): Cleanup {
  const steps: Array<() => Promise<void>> = [];
  let running: Promise<void> | undefined;
  const run = (): Promise<void> =>
    (running ??= (async () => {
      for (const step of steps.reverse()) {
        await step().catch((error: unknown) => progress(`cleanup failed: ${String(error)}`));
      }
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM), as the shell reports a run
    // the signal killed: a CI step or a supervisor can tell a stop from a failure.
    const status = 128 + constants.signals[signal];
    process.once(signal, () => void run().finally(() => process.exit(status)));
  }
  return { push: (step) => void steps.push(step), run };
}
