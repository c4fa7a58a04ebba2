import { Module } from '@nestjs/common';
import { JobsModule } from '../common/jobs/jobs.module';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { FileMetagraphSource } from './metagraph/file-metagraph-source';
import { METAGRAPH_SOURCE } from './metagraph/metagraph-source';
import { MetagraphService } from './metagraph/metagraph.service';
import { IndexSyncService } from './index/index-sync.service';
import { MinerIndexRepository } from './index/miner-index.repository';
import { MinerClient } from './miner-client';
import { MinersRepository } from './miners.repository';
import { NetworkService } from './network.service';

/** The miner network. Other modules use NetworkService only. */
@Module({
  imports: [JobsModule],
  providers: [
    NetworkService,
    IndexSyncService,
    MinerIndexRepository,
    MetagraphService,
    MinerClient,
    MinersRepository,
    {
      provide: METAGRAPH_SOURCE,
      inject: [APP_CONFIG],
      // Without a metagraph file the service still starts, with the miners it already knows.
      useFactory: (config: AppConfig) =>
        config.network.metagraphFile ? new FileMetagraphSource(config.network.metagraphFile) : null,
    },
  ],
  exports: [NetworkService],
})
export class NetworkModule {}
