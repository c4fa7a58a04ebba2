import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import { whileThePoolIsHeld } from '../support/held-pool';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

describe('A request while every pooled connection is held', () => {
  let app: TestApp;

  beforeAll(async () => {
    // A short wait for a pooled connection, so the 503 comes before the pool is let go. The same
    // setting bounds each new connection's connect: at 500 ms the app's first connect timed out
    // once, with the machine's load average at 9 (three workers beside other work), and the app
    // never started. 2 s leaves room for that and still answers well within the test's time.
    app = await startTestApp({ DATABASE_CONNECT_TIMEOUT_MS: '2000' }, { ownDatabase: true });
  });
  afterAll(() => app.close());

  // pg-pool's "timeout exceeded when trying to connect" was a 503 with no Retry-After, so a
  // client had nothing to back off by while the replica was busiest (a review's finding).
  it('answers 503 Database unavailable with Retry-After, as every database 503 does', async () => {
    await whileThePoolIsHeld(app, async () => {
      const response = await app.http.get('/api/v1/keys').set('X-API-Key', TEST_MASTER_KEY);
      expect(response.status).toBe(503);
      expect(response.body.detail).toBe(ERROR_DETAILS.databaseUnavailable);
      expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    });
  });
});
