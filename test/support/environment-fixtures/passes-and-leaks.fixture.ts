import { createServer } from 'node:net';

/**
 * Not a spec (no testMatch names it): ../test-environment.spec.ts runs it in a jest of its own.
 * Its test passes and forgets a listening server: the environment must fail the file.
 */
it('passes and forgets its server', async () => {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  expect(server.listening).toBe(true);
});
