import { Module } from '@nestjs/common';
import { JobsModule } from '../common/jobs/jobs.module';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { BucketFetchesRepository } from './buckets/bucket-fetches.repository';
import { BucketReader } from './buckets/bucket-reader';
import { CredibilityRecorder } from './credibility-recorder';
import { FileMetagraphSource } from './metagraph/file-metagraph-source';
import { METAGRAPH_SOURCE } from './metagraph/metagraph-source';
import { MetagraphService } from './metagraph/metagraph.service';
import { IndexSyncService } from './index/index-sync.service';
import { MinerIndexRepository } from './index/miner-index.repository';
import { MinersRepository } from './miners.repository';
import { NetworkService } from './network.service';
import { CallBudgetRepository } from './transport/call-budget.repository';
import { CallBudgets } from './transport/call-budgets';
import { MinerClient } from './transport/miner-client';

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
    CredibilityRecorder,
    BucketReader,
    BucketFetchesRepository,
    CallBudgets,
    CallBudgetRepository,
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
