/**
 * The timeout jest-circus gives a test of this file that sets none of its own: what the run's
 * configuration and `jest.setTimeout` left in its state. Read from that state (held on the
 * global under a symbol of its own) because jest offers no way to ask, and the tier specs must
 * see what applies, not what the configuration says.
 */
export function timeoutInEffect(): number {
  const symbol = Object.getOwnPropertySymbols(globalThis).find(
    (candidate) => candidate.description === 'JEST_STATE_SYMBOL',
  );
  const state = symbol && (globalThis as Record<symbol, { testTimeout?: unknown }>)[symbol];
  if (typeof state?.testTimeout !== 'number') throw new Error("jest-circus's state has no timeout");
  return state.testTimeout;
}
