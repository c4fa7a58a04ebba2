import { until } from './until';

/** Timers that hold this process open (an unref'd timer does not, and is not counted). */
export function runningTimers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}

/**
 * Waits up to `timeoutMs` for the process to have no more running timers than `before`, and
 * answers how many more are still running then (0 once they have ended).
 */
export async function timersLeftAfter(before: number, timeoutMs: number): Promise<number> {
  return until(async () => (runningTimers() <= before ? 0 : undefined), timeoutMs, 25).catch(
    () => runningTimers() - before,
  );
}
