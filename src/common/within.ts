/** What `orLate` gives when the time passed first. */
export const LATE = Symbol('late');

/**
 * The work's value, or LATE once `ms` have passed: for a wait whose end is no failure (answer
 * from what is there, go on in the background). The work itself carries on (a promise cannot be
 * cancelled): this bounds a wait, not the work; its own failure is passed on.
 */
export function orLate<T>(work: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(() => resolve(LATE), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * The work's value, or a rejection with `timedOut()`'s error (by default "no answer within
 * <ms> ms") once `ms` have passed: orLate, with the end of the wait as a failure.
 */
export async function within<T>(
  work: Promise<T>,
  ms: number,
  timedOut: () => Error = () => new Error(`no answer within ${ms} ms`),
): Promise<T> {
  const outcome = await orLate(work, ms);
  if (outcome === LATE) throw timedOut();
  return outcome;
}
