import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';

/**
 * `GET /metrics`. Only the endpoint: the MetricsService it reads is the global one in
 * common/metrics that every layer records into (hence not named MetricsModule).
 */
@Module({ controllers: [MetricsController] })
export class MetricsEndpointModule {}
