/** A signal that aborts when either of two does, detached by `release` once it is not needed. */
export interface EitherSignal {
  signal: AbortSignal;
  release(): void;
}

/**
 * `AbortSignal.any` for a short-lived signal joined to a long-lived one (a process's shutdown):
 * on Node 20 `AbortSignal.any` keeps every signal it makes among the long-lived source's
 * dependents until that source aborts, about 900 a minute under load, dead ones included (found
 * by a soak test; Node 24 drops them). Here the listeners are removed by `release`, which the
 * caller runs once its work is done.
 */
export function eitherSignal(long: AbortSignal, short: AbortSignal): EitherSignal {
  const controller = new AbortController();
  const aborted = [long, short].find((signal) => signal.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const onLong = () => controller.abort(long.reason);
  const onShort = () => controller.abort(short.reason);
  long.addEventListener('abort', onLong, { once: true });
  short.addEventListener('abort', onShort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      long.removeEventListener('abort', onLong);
      short.removeEventListener('abort', onShort);
    },
  };
}
