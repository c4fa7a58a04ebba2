import { createServer } from 'node:net';

/**
 * Not a spec (no testMatch names it): ../test-environment.spec.ts runs it in a jest of its own.
 * Its test fails before its cleanup, and so leaves a server listening, as a failing test that
 * skips its cleanup does: the failure must be the one reported.
 */
it('fails an assertion before closing its server', async () => {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  expect('what the test saw').toBe('what it expected');
  server.close();
});
