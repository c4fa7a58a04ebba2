import { Module } from '@nestjs/common';
import { MinerIndexModule } from '../../network/index/miner-index.module';
import { NetworkModule } from '../../network/network.module';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

@Module({
  imports: [MinerIndexModule, NetworkModule],
  controllers: [StatsController],
  providers: [StatsService],
})
export class StatsModule {}
