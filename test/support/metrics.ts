import { TEST_MASTER_KEY, TestApp } from './test-app';

/** Scrapes GET /metrics with the master key. */
export async function scrape(app: TestApp): Promise<string> {
  const response = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY).expect(200);
  return response.text;
}

/** Retries `check` until it stops throwing (late events: stragglers, writes after a response). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
