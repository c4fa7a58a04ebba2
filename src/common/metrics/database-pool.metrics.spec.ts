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
  it("reports the pool's open, idle connections and waiting queries, each under its state", async () => {
    const metrics = setUp({ master: { totalCount: 5, idleCount: 3, waitingCount: 2 } });
    const text = await metrics.scrape();
    const connections = (state: string) => sample(text, 'gateway_db_pool_connections', { state });
    expect(connections('total')).toBe(5);
    expect(connections('idle')).toBe(3);
    expect(connections('waiting')).toBe(2);
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
        'could not read 1 gauge, left at their last values: driver gone (gateway_db_pool_connections)',
      );
    } finally {
      warn.mockRestore();
    }
  });
});
