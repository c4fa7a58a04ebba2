import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../common/clock/clock';
import { JobRunner } from '../common/jobs/job-runner';
import { MetricsService } from '../common/metrics/metrics.service';
import { PeriodicJob } from '../common/jobs/periodic-job';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { IndexRow, InvalidIndexError } from './index/compressed-index';
import { MinerIndexService } from './index/miner-index.service';
import { ServingMiner } from './miner.entity';
import { NetworkService } from './network.service';
import { MAX_DATA_AGE_DAYS } from './protocol';
import { WrongAnswerError } from './sn13/messages';
import { MinerCallError, MinerFailureReason, NOT_THE_MINERS_FAULT } from './transport/miner-client';

export const INDEX_SYNC_JOB = 'index-sync';

export interface IndexSyncReport {
  miners: number;
  synced: number;
  rejected: number;
  failed: number;
  /** Not called, or refused without fault (no budget left, blacklisted, not served…). */
  skipped: number;
  skippedReasons: Partial<Record<MinerFailureReason, number>>;
  rows: number;
  seconds: number;
  spotChecks: { uid: number; score: number; problems: string[] }[];
}

interface SyncedMiner {
  miner: ServingMiner;
  rows: IndexRow[];
}

/**
 * The background job that keeps the miner index fresh: every INDEX_SYNC_INTERVAL it fetches
 * GetMinerIndex from every available miner (bounded concurrency) and replaces each miner's rows
 * and aggregate contributions. A malformed or oversize index is rejected (the previous one
 * stays) and costs credibility; a miner without budget left is skipped. Then a few miners are
 * spot-checked bucket by bucket.
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
    private readonly index: MinerIndexService,
    private readonly clock: Clock,
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
    const miners = this.network.availableMiners('GetMinerIndex');
    const report: IndexSyncReport = {
      miners: miners.length,
      synced: 0,
      rejected: 0,
      failed: 0,
      skipped: 0,
      skippedReasons: {},
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
    const retention = MAX_DATA_AGE_DAYS * 24 * 3_600_000;
    await this.network.deleteBucketFetchesBefore(new Date(this.clock.now().getTime() - retention));
    report.seconds = Math.round((performance.now() - started) / 10) / 100;
    this.logProgress(report, started);
    this.metrics.observeIndexSync({ ...report, seconds: (performance.now() - started) / 1000 });
    return report;
  }

  private async syncMiner(
    miner: ServingMiner,
    report: IndexSyncReport,
  ): Promise<IndexRow[] | undefined> {
    try {
      const rows = await this.network.fetchMinerIndex(miner, this.clock.now());
      await this.index.replaceMinerIndex(miner.uid, rows);
      report.synced++;
      report.rows += rows.length;
      return rows;
    } catch (error) {
      if (error instanceof InvalidIndexError || error instanceof WrongAnswerError) {
        report.rejected++;
        this.logger.warn(`miner ${miner.uid}: index rejected, previous one kept: ${error.message}`);
      } else if (error instanceof MinerCallError && NOT_THE_MINERS_FAULT.has(error.reason)) {
        report.skipped++;
        report.skippedReasons[error.reason] = (report.skippedReasons[error.reason] ?? 0) + 1;
      } else if (error instanceof MinerCallError) {
        report.failed++;
        this.logger.warn(
          `miner ${miner.uid}: index not fetched (${error.reason}): ${error.message}`,
        );
      } else {
        report.failed++;
        this.logger.error(`miner ${miner.uid}: index not stored: ${(error as Error).message}`);
      }
      return undefined;
    }
  }

  /**
   * Checks a random bucket of some freshly synced indexes against what the miner serves, all at
   * once. Buckets too large for MINER_MAX_RESPONSE_BYTES are not picked: an honest miner would
   * fail them.
   */
  private async spotCheck(synced: SyncedMiner[]): Promise<IndexSyncReport['spotChecks']> {
    const largest = this.config.network.minerMaxResponseBytes / 2;
    const candidates = synced
      .map(({ miner, rows }) => ({ miner, rows: rows.filter((row) => row.bytes <= largest) }))
      .filter((entry) => entry.rows.length > 0);
    const chosen = shuffle(candidates).slice(0, this.config.network.indexSync.spotChecks);
    const results = await Promise.all(
      chosen.map(async ({ miner, rows }) => {
        const row = rows[Math.floor(Math.random() * rows.length)];
        const bucket = { source: row.source, label: row.label, timeBucket: row.timeBucket };
        const outcome = await this.network.fetchBucket(miner, bucket, row.bytes);
        if (!outcome.ok)
          return NOT_THE_MINERS_FAULT.has(outcome.reason)
            ? undefined
            : { uid: miner.uid, score: 0, problems: [`bucket not fetched: ${outcome.message}`] };
        return { uid: miner.uid, score: outcome.check.score, problems: outcome.check.problems };
      }),
    );
    const checked = results.filter((result) => result !== undefined);
    for (const { uid, problems } of checked)
      if (problems.length > 0) this.logger.warn(`miner ${uid} spot check: ${problems.join('; ')}`);
    return checked;
  }

  private logProgress(report: IndexSyncReport, started: number): void {
    const seconds = (performance.now() - started) / 1000;
    const done = report.synced + report.rejected + report.failed + report.skipped;
    const skipped = Object.entries(report.skippedReasons)
      .map(([reason, count]) => `${reason}: ${count}`)
      .join(', ');
    this.logger.log(
      `index sync: ${done}/${report.miners} miners, ${report.rows} rows loaded, ${Math.round(report.rows / Math.max(seconds, 0.001))} rows/s` +
        (report.rejected + report.failed > 0
          ? `, ${report.rejected} rejected, ${report.failed} failed`
          : '') +
        (report.skipped > 0 ? `, ${report.skipped} skipped (${skipped})` : ''),
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
