import { getEventListeners } from 'node:events';
import { eitherSignal } from './either-signal';

describe(eitherSignal.name, () => {
  it('aborts when either signal does, with its reason', () => {
    for (const which of ['long', 'short'] as const) {
      const long = new AbortController();
      const short = new AbortController();
      const { signal } = eitherSignal(long.signal, short.signal);
      (which === 'long' ? long : short).abort(which);
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBe(which);
    }
  });

  it('is aborted at once when one already is', () => {
    const long = new AbortController();
    long.abort('shutdown');
    const { signal } = eitherSignal(long.signal, new AbortController().signal);
    expect(signal.reason).toBe('shutdown');
  });

  // The long-lived signal keeps nothing of a released one (AbortSignal.any did on Node 20).
  it('leaves no listener on the long-lived signal once released', () => {
    const long = new AbortController();
    for (let i = 0; i < 1000; i++)
      eitherSignal(long.signal, new AbortController().signal).release();
    expect(getEventListeners(long.signal, 'abort')).toHaveLength(0);
    const short = new AbortController();
    const { signal, release } = eitherSignal(long.signal, short.signal);
    release();
    long.abort();
    expect(signal.aborted).toBe(false);
  });
});
