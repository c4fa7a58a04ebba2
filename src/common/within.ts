/**
 * The work's value, or a rejection with `timedOut()`'s error (by default "no answer within
 * <ms> ms") once `ms` have passed. The work itself carries on (a promise cannot be cancelled):
 * this bounds a wait, not the work.
 */
export function within<T>(
  work: Promise<T>,
  ms: number,
  timedOut: () => Error = () => new Error(`no answer within ${ms} ms`),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
