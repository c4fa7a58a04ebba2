import { Global, Module } from '@nestjs/common';
import { DatabasePoolMetrics } from './database-pool.metrics';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/** Global: the code that produces events (miner client, quorum, jobs, guards) records them. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, DatabasePoolMetrics],
  exports: [MetricsService],
})
export class MetricsModule {}
