import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { PublicationModule } from '../publication/publication.module';
import { HealthController } from './health.controller';
import { HealthMetrics } from './health.metrics';
import { HealthRepository } from './health.repository';
import { HealthService } from './health.service';

@Module({
  imports: [NetworkModule, PublicationModule],
  controllers: [HealthController],
  providers: [HealthService, HealthRepository, HealthMetrics],
})
export class HealthModule {}
