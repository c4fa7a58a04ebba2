/**
 * Polls `probe` until it answers something other than undefined, and returns that; fails after
 * `timeoutMs`. (`eventually` in metrics.ts retries an assertion instead: for checks that throw.)
 */
export async function until<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}
