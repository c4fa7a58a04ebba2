import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { debugEnabled } from '../../common/logging/debug-lines';
import { Clock } from '../../common/clock/clock';
import { JobRunner } from '../../common/jobs/job-runner';
import { MetricsService } from '../../common/metrics/metrics.service';
import { PeriodicJob } from '../../common/jobs/periodic-job';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { IndexSpotChecks, SyncedMiner } from './index-spot-checks';
import { MinerIndexService } from '../index/miner-index.service';
import { IndexRow } from '../index/compressed-index';
import { NetworkService } from '../network.service';
import { CallBudgets } from '../transport/call-budgets';
import { roundTo } from '../../common/round-to';
import {
  calledSomeMiner,
  emptyReport,
  endLine,
  IndexSyncReport,
  progressLine,
} from './index-sync-report';
import { ShutdownNotice } from '../../common/lifecycle/shutdown-notice';
import { MinerQueue } from './miner-queue';
import { MinerSync } from './miner-sync';
import { OutdatedDrops } from './outdated-drops';

// The service is the index sync's one way in: what other code needs of the pieces it is built
// from is named here too.
export type { IndexSyncReport } from './index-sync-report';

export const INDEX_SYNC_JOB = 'index-sync';

/**
 * The background job that keeps the miner index fresh: every INDEX_SYNC_INTERVAL it fetches
 * GetMinerIndex from every available miner (bounded concurrency) and replaces each miner's rows and
 * aggregate contributions. A malformed or oversize index is rejected (the previous one stays) and
 * costs credibility (miner-sync.ts). The sync follows the GetMinerIndex budget (the configuration
 * refuses an interval shorter than it allows): miners with a call left go first, a miner whose call
 * frees up within a sixth of the interval (at most 10 minutes) is waited for, the others are
 * skipped (miner-queue.ts), and so is one whose uid is no longer its hotkey's when its turn comes.
 * Then a few miners with a GetDataEntityBucket call left are spot-checked (index-spot-checks.ts),
 * the indexes of miners that missed STALE_AFTER_SYNCS syncs in a row are dropped, and the hours
 * that have grown older than MAX_DATA_AGE_DAYS since their miner's last sync are removed
 * (outdated-drops.ts). A run cut short by shutdown does none of that: it reached only some miners,
 * and the calls it abandoned (`shutdown`, counted as skipped) say nothing of the others.
 */
@Injectable()
export class IndexSyncService
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger(IndexSyncService.name);
  private readonly job: PeriodicJob<IndexSyncReport>;
  private readonly queue: MinerQueue;
  private readonly minerSync: MinerSync;
  private readonly drops: OutdatedDrops;
  private stopping = false;
  /** The report of the run in progress (or the last run): what a run that threw is judged by. */
  private runReport: IndexSyncReport | undefined;
  /** When this process last ran the spot checks (performance.now(); never yet). */
  private spotChecksRanAt = -Infinity;

  constructor(
    jobs: JobRunner,
    private readonly network: NetworkService,
    index: MinerIndexService,
    budgets: CallBudgets,
    private readonly spotChecks: IndexSpotChecks,
    clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly shutdown: ShutdownNotice,
  ) {
    this.job = new PeriodicJob(
      jobs,
      INDEX_SYNC_JOB,
      config.network.indexSync.intervalMs,
      () => this.syncAll(),
      this.logger,
      // Counted once it called a miner, whether it returned or threw (Postgres away at its
      // drops): one that called none spent no budget and is retried within seconds.
      (ended) => {
        const report = 'result' in ended ? ended.result : this.runReport;
        return report !== undefined && calledSomeMiner(report);
      },
    );
    this.queue = new MinerQueue(budgets, clock, config, () => this.isStopping());
    this.minerSync = new MinerSync(network, index, clock, config, this.logger);
    this.drops = new OutdatedDrops(network, index, clock, this.logger);
  }

  onApplicationBootstrap(): void {
    // Readiness does not wait for the first sync, which waits for the metagraph.
    this.job.start(this.config.network.indexSync.onStart ? this.network.whenReady() : undefined);
  }

  onModuleDestroy(): void {
    this.stopping = true;
    this.job.stop();
  }

  /**
   * From the first signal on, no next miner is synced: the drain that comes before the app's
   * close (onModuleDestroy) is for users' requests, not for more miner calls.
   */
  private isStopping(): boolean {
    return this.stopping || this.shutdown.hasBegun();
  }

  /** After the miner client aborted its calls (onModuleDestroy), a running sync ends quickly. */
  beforeApplicationShutdown(): Promise<void> {
    return this.job.settled();
  }

  /**
   * Whether the run spot-checks: one that called a miner does; one that called none (it does not
   * count, and is tried again within seconds to minutes, 5 s doubling) only when this process
   * ran none within the interval. Each check is a miner's only GetDataEntityBucket call of the
   * hour beside a validator: a replica restarted after its index calls were spent ran 5 at each
   * retry, about 50 before the calls freed up an hour later (a scale audit's finding).
   */
  private spotChecksDue(report: IndexSyncReport): boolean {
    return (
      calledSomeMiner(report) ||
      performance.now() - this.spotChecksRanAt >= this.config.network.indexSync.intervalMs
    );
  }

  /** Runs the sync now if no replica ran it within the interval (tests and operators use this). */
  async runIfDue(): Promise<IndexSyncReport | undefined> {
    return (await this.job.runIfDue()).result;
  }

  private async syncAll(): Promise<IndexSyncReport> {
    const started = performance.now();
    this.runReport = undefined;
    const miners = this.network.availableMiners('GetMinerIndex');
    const report = (this.runReport = emptyReport(miners.length));
    const synced: SyncedMiner[] = [];
    const missed: number[] = [];
    let lastLog = started;
    let finished = 0;
    const queue = await this.queue.inBudgetOrder(miners);
    if (debugEnabled()) {
      const waiting = queue.filter((entry) => entry.notBefore > 0).length;
      this.logger.debug(
        { miners: miners.length, waiting_for_budget: waiting },
        `index sync round: ${miners.length} miners queued, ${waiting} of them waiting for budget`,
      );
    }
    const worker = async () => {
      for (let next = queue.shift(); next && !this.isStopping(); next = queue.shift()) {
        await this.queue.waitForBudget(next.notBefore);
        if (this.isStopping()) break;
        const { miner } = next;
        const rows = await this.minerSync.sync(miner, report, missed);
        finished++;
        // Only the bucket a spot check would fetch is kept till the run's end, not the index.
        const bucket = rows && this.spotChecks.pick(rows);
        if (bucket) synced.push({ miner, bucket, claimed: claimedBytes(rows) });
        // Every 5 s, and by the worker that finished the last miner (before the spot checks):
        // one line, however many workers there are.
        if (performance.now() - lastLog > 5000 || finished === miners.length) {
          lastLog = performance.now();
          this.logger.log(progressLine(report, (performance.now() - started) / 1000));
        }
      }
    };
    await Promise.all(Array.from({ length: this.config.network.indexSync.concurrency }, worker));
    if (!this.isStopping() && this.spotChecksDue(report)) {
      this.spotChecksRanAt = performance.now();
      report.spotChecks = await this.spotChecks.check(synced);
    }
    // Checked after the spot checks too: shutdown aborts their calls.
    if (!this.isStopping()) await this.drops.drop(report, missed);
    // One reading of the clock for both: the line names it to the hundredth, the metric whole.
    const seconds = (performance.now() - started) / 1000;
    report.seconds = roundTo(seconds, 2);
    // Neither spot checks nor drops ran when stopping (see the class comment).
    this.logger.log(endLine(report, this.isStopping()));
    this.metrics.observeIndexSync({ ...report, seconds });
    return report;
  }
}

/** The bytes an index claims in all. */
function claimedBytes(rows: readonly IndexRow[]): number {
  let bytes = 0;
  for (const row of rows) bytes += row.bytes;
  return bytes;
}
