import { Global, Module } from '@nestjs/common';
import { DatabasePoolMetrics } from './database-pool.metrics';
import { MetricsService } from './metrics.service';
import { RedisMetrics } from './redis.metrics';

/**
 * Global: the code that produces events (miner client, quorum, jobs, guards) records them. The
 * endpoint that serves them is a feature (modules/metrics), so this floor imports nothing above.
 */
@Global()
@Module({
  providers: [MetricsService, DatabasePoolMetrics, RedisMetrics],
  exports: [MetricsService],
})
export class MetricsModule {}
