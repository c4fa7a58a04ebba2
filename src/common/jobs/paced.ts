/**
 * Runs `work` on each item, starting one every `spacingMs` at most and `concurrency` at once at
 * most; stops starting new ones once `stopped()` says so. Resolves when all started ones ended.
 */
export async function paced<T>(
  items: readonly T[],
  concurrency: number,
  spacingMs: number,
  stopped: () => boolean,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  let nextStart = 0;
  for (const item of items) {
    if (stopped()) break;
    // Timers may fire a millisecond early: wait until the start time has really come.
    for (let wait = nextStart - performance.now(); wait > 0; wait = nextStart - performance.now())
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
    while (running.size >= concurrency) await Promise.race(running);
    if (stopped()) break;
    nextStart = performance.now() + spacingMs;
    const started = work(item).finally(() => running.delete(started));
    running.add(started);
  }
  await Promise.all(running);
}
