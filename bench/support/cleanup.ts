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
    process.once(signal, () => void run().finally(() => process.exit(130)));
  }
  return { push: (step) => void steps.push(step), run };
}
