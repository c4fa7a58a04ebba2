import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

@Module({
  imports: [NetworkModule],
  controllers: [StatsController],
  providers: [StatsService],
})
export class StatsModule {}
