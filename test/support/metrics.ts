import { TEST_MASTER_KEY, TestApp } from './test-app';

/** Scrapes GET /metrics with the master key. */
export async function scrape(app: TestApp): Promise<string> {
  const response = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY).expect(200);
  return response.text;
}

/**
 * The value of one sample in Prometheus text, found by metric name and exactly these labels
 * (in any order); undefined when the series does not exist.
 */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const wanted = Object.entries(labels);
    if (
      wanted.length === Object.keys(found).length &&
      wanted.every(([key, value]) => found[key] === value)
    )
      return Number(match[3]);
  }
  return undefined;
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
