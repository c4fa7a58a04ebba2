import { connect } from 'node:net';

/**
 * Not a spec (no testMatch names it): ../loopback-only-failure.spec.ts runs it in a jest of its
 * own. Its one test passes: it connects to a public address and takes the failure in its
 * stride, as code under test would; the loopback guard's afterAll check must fail the suite.
 */
it('swallows a refused connection to a public address', async () => {
  const socket = connect({ host: '203.0.113.9', port: 8091 });
  // The guard refused before Node's connect began: nothing was dialled.
  expect(socket.connecting).toBe(false);
  const failure = await new Promise<Error>((resolve) => socket.once('error', resolve));
  expect(failure.message).toMatch(/^203\.0\.113\.9:8091: a test may connect to loopback only/);
});
