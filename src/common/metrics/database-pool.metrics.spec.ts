import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { sample } from '../../../test/support/prometheus-text';
import { DatabasePoolMetrics } from './database-pool.metrics';
import { MetricsService } from './metrics.service';

/**
 * DatabasePoolMetrics on a real MetricsService, over a DataSource whose pool is `driver.master`.
 */
function setUp(driver: object): MetricsService {
  const metrics = new MetricsService();
  new DatabasePoolMetrics(metrics, { driver } as unknown as DataSource).onModuleInit();
  return metrics;
}

describe(DatabasePoolMetrics.name, () => {
  // pg-pool's waitingCount is requests for a connection (a checkout), not connections: it was
  // `gateway_db_pool_connections{state="waiting"}`, read as connections beside total and idle.
  it("reports the pool's open and idle connections, and the requests waiting for one apart", async () => {
    const metrics = setUp({ master: { totalCount: 5, idleCount: 3, waitingCount: 2 } });
    const text = await metrics.scrape();
    const connections = (state: string) => sample(text, 'gateway_db_pool_connections', { state });
    expect(connections('total')).toBe(5);
    expect(connections('idle')).toBe(3);
    expect(connections('waiting')).toBeUndefined();
    expect(sample(text, 'gateway_db_pool_waiting_requests')).toBe(2);
  });

  it('warns when the pool cannot be read, and the scrape still answers', async () => {
    const driver = {
      get master(): never {
        throw new Error('driver gone');
      },
    };
    const metrics = setUp(driver);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      expect(await metrics.scrape()).toContain('# TYPE gateway_db_pool_connections gauge');
      expect(warn).toHaveBeenCalledWith(
        'could not read 2 gauges, left at their last values: driver gone (gateway_db_pool_connections, gateway_db_pool_waiting_requests)',
      );
    } finally {
      warn.mockRestore();
    }
  });
});
