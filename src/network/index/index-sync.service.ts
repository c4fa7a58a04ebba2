import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { JobRunner } from '../../common/jobs/job-runner';
import { MetricsService } from '../../common/metrics/metrics.service';
import { PeriodicJob } from '../../common/jobs/periodic-job';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MinerEntity } from '../miner.entity';
import { MinerCallError, MinerClient } from '../miner-client';
import { NetworkService } from '../network.service';
import { checkBucket } from './bucket-check';
import { IndexRow, InvalidIndexError, parseCompressedIndex } from './compressed-index';
import { MinerIndexRepository } from './miner-index.repository';

export const INDEX_SYNC_JOB = 'index-sync';

export interface IndexSyncReport {
  miners: number;
  synced: number;
  rejected: number;
  failed: number;
  rows: number;
  seconds: number;
  spotChecks: { uid: number; score: number; problems: string[] }[];
}

interface SyncedMiner {
  miner: MinerEntity;
  rows: IndexRow[];
}

/**
 * The background job that keeps the miner index fresh: every INDEX_SYNC_INTERVAL it fetches
 * GetMinerIndex from every available miner (bounded concurrency) and replaces each miner's rows
 * and aggregate contributions. A malformed or oversize index is rejected (the previous one
 * stays) and costs credibility. Then a few miners are spot-checked bucket by bucket.
 */
@Injectable()
export class IndexSyncService
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger(IndexSyncService.name);
  private readonly job: PeriodicJob<IndexSyncReport>;
  private stopping = false;

  constructor(
    jobs: JobRunner,
    private readonly network: NetworkService,
    private readonly client: MinerClient,
    private readonly repository: MinerIndexRepository,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.job = new PeriodicJob(
      jobs,
      INDEX_SYNC_JOB,
      config.network.indexSync.intervalMs,
      () => this.syncAll(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    // Readiness does not wait for the first sync, which waits for the metagraph.
    this.job.start(this.config.network.indexSync.onStart ? this.network.whenReady() : undefined);
  }

  onModuleDestroy(): void {
    this.stopping = true;
    this.job.stop();
  }

  /** After the miner client aborted its calls (onModuleDestroy), a running sync ends quickly. */
  beforeApplicationShutdown(): Promise<void> {
    return this.job.settled();
  }

  /** Runs the sync now if no replica ran it within the interval (tests and operators use this). */
  async runIfDue(): Promise<IndexSyncReport | undefined> {
    return (await this.job.runIfDue()).result;
  }

  private async syncAll(): Promise<IndexSyncReport> {
    const started = performance.now();
    const miners = this.network.availableMiners();
    const report: IndexSyncReport = {
      miners: miners.length,
      synced: 0,
      rejected: 0,
      failed: 0,
      rows: 0,
      seconds: 0,
      spotChecks: [],
    };
    const synced: SyncedMiner[] = [];
    let lastLog = started;
    const queue = [...miners];
    const worker = async () => {
      for (let miner = queue.shift(); miner && !this.stopping; miner = queue.shift()) {
        const rows = await this.syncMiner(miner, report);
        if (rows) synced.push({ miner, rows });
        if (performance.now() - lastLog > 5000 || queue.length === 0) {
          lastLog = performance.now();
          this.logProgress(report, started);
        }
      }
    };
    await Promise.all(Array.from({ length: this.config.network.indexSync.concurrency }, worker));
    report.spotChecks = await this.spotCheck(synced);
    report.seconds = Math.round((performance.now() - started) / 10) / 100;
    this.logProgress(report, started);
    this.metrics.observeIndexSync({ ...report, seconds: (performance.now() - started) / 1000 });
    return report;
  }

  private async syncMiner(
    miner: MinerEntity,
    report: IndexSyncReport,
  ): Promise<IndexRow[] | undefined> {
    try {
      const reply = await this.client.call(
        { uid: miner.uid, axonUrl: miner.axonUrl! },
        'GetMinerIndex',
        {},
        this.config.network.indexSync.fetchTimeoutMs,
      );
      const rows = parseCompressedIndex(reply.body, new Date());
      await this.repository.replaceMinerIndex(miner.uid, rows);
      report.synced++;
      report.rows += rows.length;
      return rows;
    } catch (error) {
      if (error instanceof InvalidIndexError) {
        report.rejected++;
        this.logger.warn(`miner ${miner.uid}: index rejected, previous one kept: ${error.message}`);
        this.network.recordScores([{ uid: miner.uid, score: 0 }]);
      } else if (error instanceof MinerCallError) {
        report.failed++;
        this.logger.warn(
          `miner ${miner.uid}: index not fetched (${error.reason}): ${error.message}`,
        );
        this.network.recordScores([
          {
            uid: miner.uid,
            score: error.reason === 'busy' || error.reason === 'circuit_open' ? null : 0,
          },
        ]);
      } else {
        report.failed++;
        this.logger.error(`miner ${miner.uid}: index not stored: ${(error as Error).message}`);
      }
      return undefined;
    }
  }

  /** Picks a random bucket from some freshly synced indexes and checks what the miner serves. */
  private async spotCheck(synced: SyncedMiner[]): Promise<IndexSyncReport['spotChecks']> {
    const chosen = shuffle(synced.filter((entry) => entry.rows.length > 0)).slice(
      0,
      this.config.network.indexSync.spotChecks,
    );
    const results: IndexSyncReport['spotChecks'] = [];
    for (const { miner, rows } of chosen) {
      const row = rows[Math.floor(Math.random() * rows.length)];
      const bucket = { time_bucket_id: row.timeBucket, source: row.source, label: row.label };
      let result;
      try {
        const reply = await this.client.call(
          { uid: miner.uid, axonUrl: miner.axonUrl! },
          'GetDataEntityBucket',
          { bucket_id: bucket },
          this.config.network.indexSync.fetchTimeoutMs,
        );
        result = checkBucket(bucket, row.bytes, reply.body);
      } catch (error) {
        result = { score: 0, problems: [`bucket not fetched: ${(error as Error).message}`] };
      }
      if (result.problems.length > 0)
        this.logger.warn(`miner ${miner.uid} spot check: ${result.problems.join('; ')}`);
      results.push({ uid: miner.uid, ...result });
    }
    this.network.recordScores(results.map(({ uid, score }) => ({ uid, score })));
    return results;
  }

  private logProgress(report: IndexSyncReport, started: number): void {
    const seconds = (performance.now() - started) / 1000;
    const done = report.synced + report.rejected + report.failed;
    this.logger.log(
      `index sync: ${done}/${report.miners} miners, ${report.rows} rows loaded, ${Math.round(report.rows / Math.max(seconds, 0.001))} rows/s` +
        (report.rejected + report.failed > 0
          ? `, ${report.rejected} rejected, ${report.failed} failed`
          : ''),
    );
  }
}

function shuffle<T>(items: T[]): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [result[i], result[j]] = [result[j], result[i]];
  }
  return result;
}
