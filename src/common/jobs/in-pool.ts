/**
 * Runs `work` on each item, at most `concurrency` at once; starts no new one once `stopped()`
 * says so. Resolves when all started ones ended.
 */
export async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  stopped: () => boolean,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  for (const item of items) {
    while (running.size >= concurrency) await Promise.race(running);
    if (stopped()) break;
    const started = work(item).finally(() => running.delete(started));
    running.add(started);
  }
  await Promise.all(running);
}
