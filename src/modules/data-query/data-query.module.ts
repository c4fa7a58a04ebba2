import { Module } from '@nestjs/common';
import { NetworkModule } from '../../network/network.module';
import { DataQueryController } from './data-query.controller';
import { DataQueryService } from './data-query.service';

@Module({
  imports: [NetworkModule],
  controllers: [DataQueryController],
  providers: [DataQueryService],
})
export class DataQueryModule {}
