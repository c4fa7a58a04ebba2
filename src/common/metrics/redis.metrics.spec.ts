import type { RedisConnection } from '../redis/redis-connection';
import { sample } from '../../../test/support/prometheus-text';
import { MetricsService } from './metrics.service';
import { RedisMetrics } from './redis.metrics';

/** RedisMetrics on a real MetricsService, over a connection that has a client or not. */
function setUp(redis: { client: object | null; problem: () => Promise<string | undefined> }) {
  const metrics = new MetricsService();
  new RedisMetrics(metrics, redis as unknown as RedisConnection).onModuleInit();
  return metrics;
}

describe(RedisMetrics.name, () => {
  it('is 1 while Redis is used, and 0 while it is not (disconnected, or resting)', async () => {
    const connection: { problem?: string } = {};
    const metrics = setUp({ client: {}, problem: () => Promise.resolve(connection.problem) });
    expect(sample(await metrics.scrape(), 'gateway_redis_connected')).toBe(1);
    connection.problem = 'not connected (reconnecting)';
    expect(sample(await metrics.scrape(), 'gateway_redis_connected')).toBe(0);
  });

  // Without REDIS_URL there is nothing to be connected to: a 1 would tell the operator that
  // rate limits are shared across replicas when each counts on its own.
  it('is absent without REDIS_URL', async () => {
    const metrics = setUp({ client: null, problem: () => Promise.resolve(undefined) });
    expect(await metrics.scrape()).not.toContain('gateway_redis_connected');
  });
});
