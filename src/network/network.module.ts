import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobsModule } from '../common/jobs/jobs.module';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { BucketReader } from './buckets/bucket-reader';
import { CredibilityRecorder } from './credibility-recorder';
import { ChainCommitmentsService, SUBTENSOR_CONNECTION } from './chain/chain-commitments.service';
import { SubtensorConnection } from './chain/subtensor-connection';
import { GRAVITY_GIT, GravityGit } from './gravity/gravity-git';
import { ChainMetagraphSource } from './metagraph/chain-metagraph-source';
import { FileMetagraphSource } from './metagraph/file-metagraph-source';
import { METAGRAPH_SOURCE, MetagraphSource } from './metagraph/metagraph-source';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinerEntity } from './miner.entity';
import { ErasedAuthorsRepository } from './erased-authors.repository';
import { IndexSpotChecks } from './index-sync/index-spot-checks';
import { IndexSyncService } from './index-sync/index-sync.service';
import { MinerIndexModule } from './index/miner-index.module';
import { MinersRepository } from './miners.repository';
import { NetworkMetrics } from './network-metrics';
import { LiveQueryService } from './live-query.service';
import { NetworkService } from './network.service';
import { ItemStore } from './stored/item-store';
import { ItemStoreRepository } from './stored/item-store.repository';
import { ContentsFetcher } from './stored/contents-fetcher';
import { LiedBuckets } from './stored/lied-buckets';
import { StoredDataService } from './stored/stored-data.service';
import { CallBudgetRepository } from './transport/call-budget.repository';
import { CallBudgets } from './transport/call-budgets';
import { MinerClient } from './transport/miner-client';

/**
 * The miner network. Other modules use NetworkService, the miner index's totals
 * (MinerIndexService, for the statistics), the chain's commitments (read, and ours written:
 * ChainCommitmentsService) and the Gravity repository only; the node connection stays inside
 * (docs/decisions.md, "The network's public surface").
 */
@Module({
  imports: [JobsModule, MinerIndexModule, TypeOrmModule.forFeature([MinerEntity])],
  providers: [
    NetworkService,
    LiveQueryService,
    NetworkMetrics,
    IndexSyncService,
    IndexSpotChecks,
    MetagraphService,
    MinerClient,
    MinersRepository,
    CredibilityRecorder,
    BucketReader,
    { provide: ItemStore, useClass: ItemStoreRepository },
    ErasedAuthorsRepository,
    CallBudgets,
    CallBudgetRepository,
    StoredDataService,
    ContentsFetcher,
    LiedBuckets,
    ChainCommitmentsService,
    {
      provide: SUBTENSOR_CONNECTION,
      inject: [APP_CONFIG],
      useFactory: subtensorConnection,
    },
    { provide: GRAVITY_GIT, inject: [APP_CONFIG], useFactory: gravityGit },
    {
      provide: METAGRAPH_SOURCE,
      inject: [APP_CONFIG, SUBTENSOR_CONNECTION],
      useFactory: metagraphSource,
    },
  ],
  exports: [NetworkService, MinerIndexModule, ChainCommitmentsService, GRAVITY_GIT],
})
export class NetworkModule {}

/** One connection to the node (SUBTENSOR_URL) for the metagraph and the commitments. */
function subtensorConnection(config: AppConfig): SubtensorConnection | null {
  const { subtensor } = config.network;
  return subtensor ? new SubtensorConnection(subtensor.url, subtensor.timeoutMs) : null;
}

/**
 * One clone of the Gravity repository (GRAVITY_REPO_URL) for reading validators' votes and
 * publishing ours; null without a repository.
 */
function gravityGit(config: AppConfig): GravityGit | null {
  const { repoUrl, branch, token } = config.gravity;
  return repoUrl ? new GravityGit({ repoUrl, branch, token, dataDir: config.dataDir }) : null;
}

/** Without a source the service still starts, with the miners it already knows. */
function metagraphSource(
  config: AppConfig,
  connection: SubtensorConnection | null,
): MetagraphSource | null {
  const { subtensor, metagraphFile } = config.network;
  if (subtensor && connection)
    return new ChainMetagraphSource(connection, config.netuid, subtensor);
  return metagraphFile ? new FileMetagraphSource(metagraphFile, config.netuid) : null;
}
