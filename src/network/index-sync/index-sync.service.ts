import { setTimeout as sleep } from 'node:timers/promises';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { JobRunner } from '../../common/jobs/job-runner';
import { MetricsService } from '../../common/metrics/metrics.service';
import { PeriodicJob } from '../../common/jobs/periodic-job';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { IndexSpotChecks, SpotCheckResult, SyncedMiner } from './index-spot-checks';
import { IndexRow, InvalidIndexError } from '../index/compressed-index';
import { MinerReplacedError } from '../index/miner-index.repository';
import { MinerIndexService } from '../index/miner-index.service';
import { isServing, ServingMiner } from '../miner.entity';
import { NetworkService } from '../network.service';
import { MAX_DATA_AGE_DAYS, oldestUsefulBucket } from '../protocol';
import { WrongAnswerError } from '../sn13/messages';
import { CallBudgets } from '../transport/call-budgets';
import {
  MinerCallError,
  MinerFailureReason,
  NOT_THE_MINERS_FAULT,
} from '../transport/miner-failures';
import { roundTo } from '../../common/round-to';

export const INDEX_SYNC_JOB = 'index-sync';

export interface IndexSyncReport {
  miners: number;
  synced: number;
  rejected: number;
  failed: number;
  /**
   * Not called, or refused without fault (no budget left, blacklisted, not served…); `replaced`:
   * not called because its uid is no longer the miner queued; `no_axon`: it took its axon down
   * after it was queued (SkipReason).
   */
  skipped: number;
  skippedReasons: Partial<Record<SkipReason, number>>;
  rows: number;
  seconds: number;
  spotChecks: SpotCheckResult[];
  /** Uids whose index was dropped: STALE_AFTER_SYNCS syncs in a row missed by its own fault. */
  staleDropped: number[];
  /** Index rows of hours older than MAX_DATA_AGE_DAYS removed. */
  oldRowsDropped: number;
}

/**
 * Why a miner was skipped: a refusal without fault, its uid changed hands before its call
 * (`replaced`), or the axon it serves was taken down before its call (`no_axon`).
 */
export type SkipReason = MinerFailureReason | 'replaced' | 'no_axon';

/**
 * Skips made without calling the miner: our bulkhead, an open circuit, a refused address, no
 * budget left, its uid or axon gone. The others are a miner's answers (a 403, a 404) or a call
 * abandoned at shutdown.
 */
const NOT_CALLED: ReadonlySet<SkipReason> = new Set<SkipReason>([
  'busy',
  'circuit_open',
  'address_refused',
  'no_budget',
  'replaced',
  'no_axon',
]);

/**
 * Whether a run called some miner. One that called none spent no call budget and learnt
 * nothing of the miners: it does not count for the interval (the job is tried again soon, as
 * the metagraph may since have given it miners to call) nor as a sync they missed.
 */
export function calledSomeMiner(report: IndexSyncReport): boolean {
  if (report.synced + report.rejected + report.failed > 0) return true;
  return Object.entries(report.skippedReasons).some(
    ([reason, count]) => count > 0 && !NOT_CALLED.has(reason as SkipReason),
  );
}

/** A miner to sync, and when its GetMinerIndex budget has a call again (ms; 0: now). */
interface QueuedMiner {
  miner: ServingMiner;
  notBefore: number;
}

/**
 * How long a sync waits at most for a miner whose index call frees up soon. Budgets are rolling
 * windows: with 1 call an hour and a sync an hour, a miner called a little later in the last
 * sync than in this one (or a sync started early by another replica, up to a tenth of the
 * interval) would otherwise be skipped and refreshed only two hours apart.
 */
const MAX_BUDGET_WAIT_MS = 10 * 60_000;
const BUDGET_POLL_MS = 1000;

/**
 * A miner's index is dropped once it has missed this many syncs in a row by its own fault (a
 * failed call, a rejected index, no axon served): two keep it, the third drops it. What a
 * miner that stopped answering claimed is no longer evidence of what it holds. Counted in
 * syncs, not time: a gateway that was down, or a call not made for want of budget, is not the
 * miner's doing.
 */
export const STALE_AFTER_SYNCS = 3;

/**
 * The background job that keeps the miner index fresh: every INDEX_SYNC_INTERVAL it fetches
 * GetMinerIndex from every available miner (bounded concurrency) and replaces each miner's rows and
 * aggregate contributions. A malformed or oversize index is rejected (the previous one stays) and
 * costs credibility. The sync follows the GetMinerIndex budget (the configuration refuses an
 * interval shorter than it allows): miners with a call left go first, a miner whose call frees up
 * within a sixth of the interval (at most 10 minutes) is waited for, the others are skipped, and so
 * is one whose uid is no longer its hotkey's when its turn comes. Then a
 * few miners with a GetDataEntityBucket call left are spot-checked (index-spot-checks.ts), the
 * indexes of miners that missed STALE_AFTER_SYNCS syncs in a row are dropped, and the hours that
 * have grown older than MAX_DATA_AGE_DAYS since their miner's last sync are removed. A run cut
 * short by shutdown does none of that: it reached only some miners, and the calls it abandoned
 * (`shutdown`, counted as skipped) say nothing of the others.
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
    private readonly budgets: CallBudgets,
    private readonly spotChecks: IndexSpotChecks,
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
      (ended) => !('result' in ended) || calledSomeMiner(ended.result),
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
      staleDropped: [],
      oldRowsDropped: 0,
    };
    const synced: SyncedMiner[] = [];
    const missed: number[] = [];
    let lastLog = started;
    let finished = 0;
    const queue = await this.inBudgetOrder(miners);
    const worker = async () => {
      for (let next = queue.shift(); next && !this.stopping; next = queue.shift()) {
        await this.waitForBudget(next.notBefore);
        if (this.stopping) break;
        const { miner } = next;
        const rows = await this.syncMiner(miner, report, missed);
        finished++;
        // Only the bucket a spot check would fetch is kept till the run's end, not the index.
        const bucket = rows && this.spotChecks.pick(rows);
        if (bucket) synced.push({ miner, bucket });
        // Every 5 s, and by the worker that finished the last miner (before the spot checks):
        // one line, however many workers there are.
        if (performance.now() - lastLog > 5000 || finished === miners.length) {
          lastLog = performance.now();
          this.logProgress(report, started);
        }
      }
    };
    await Promise.all(Array.from({ length: this.config.network.indexSync.concurrency }, worker));
    if (!this.stopping) report.spotChecks = await this.spotChecks.check(synced);
    // Checked after the spot checks too: shutdown aborts their calls.
    if (!this.stopping) await this.dropOutdated(report, missed);
    // One reading of the clock for both: the line names it to the hundredth, the metric whole.
    const seconds = (performance.now() - started) / 1000;
    report.seconds = roundTo(seconds, 2);
    this.logEnd(report);
    this.metrics.observeIndexSync({ ...report, seconds });
    return report;
  }

  /**
   * Counts the syncs the `missed` uids missed by their own fault, and the miners that serve no
   * axon, then drops what no longer counts: stale indexes, hours past the retention, old bucket
   * fetches.
   */
  private async dropOutdated(report: IndexSyncReport, missed: readonly number[]): Promise<void> {
    const now = this.clock.now();
    // A run that reached no miner at all (each one failed, none answered even with an index we
    // rejected) says more about our own network than about theirs: three such runs would have
    // dropped every index. A miner without an axon is the chain's word, not our network's: it
    // took its axon down (or never served one), and no validator can reach it either.
    // A run that called no miner is no sync (calledSomeMiner): it is retried within seconds to
    // minutes, and counting the miners without an axon at each would drop their indexes in a
    // minute rather than after STALE_AFTER_SYNCS syncs.
    const reached = report.synced + report.rejected > 0;
    if (calledSomeMiner(report))
      await this.index.countMissedSyncs([
        ...(reached ? missed : []),
        ...this.network.minersWithoutAxon(),
      ]);
    report.staleDropped = await this.index.dropStaleIndexes(STALE_AFTER_SYNCS);
    if (report.staleDropped.length > 0)
      this.logger.warn(
        `indexes of uids ${report.staleDropped.join(', ')} dropped: ${STALE_AFTER_SYNCS} ` +
          'index syncs in a row missed by their own fault',
      );
    report.oldRowsDropped = await this.index.dropHoursBefore(oldestUsefulBucket(now));
    const retention = MAX_DATA_AGE_DAYS * 24 * 3_600_000;
    await this.network.deleteBucketFetchesBefore(new Date(now.getTime() - retention));
  }

  /** Miners with an index call left first, then the others by when they have one again. */
  private async inBudgetOrder(miners: ServingMiner[]): Promise<QueuedMiner[]> {
    const left = await this.budgets
      .left(
        miners.map((miner) => miner.hotkey),
        'GetMinerIndex',
      )
      // Postgres away: every call will say so (no budget can be taken either).
      .catch(() => new Map<string, { left: number; nextAt: Date | null }>());
    const queued = miners.map((miner) => {
      const budget = left.get(miner.hotkey);
      const waits = budget !== undefined && budget.left === 0 && budget.nextAt !== null;
      return { miner, notBefore: waits ? budget.nextAt!.getTime() : 0 };
    });
    // Stable: the ready ones keep their order.
    return queued.sort((a, b) => a.notBefore - b.notBefore);
  }

  /**
   * Waits until `notBefore` when it is near (see MAX_BUDGET_WAIT_MS), on the service's clock;
   * a miner further off is called at once and refused by its budget (skipped, never contacted).
   */
  private async waitForBudget(notBefore: number): Promise<void> {
    const { intervalMs } = this.config.network.indexSync;
    const longest = Math.min(MAX_BUDGET_WAIT_MS, intervalMs / 6);
    if (notBefore - this.clock.now().getTime() > longest) return;
    for (
      let remaining = notBefore - this.clock.now().getTime();
      remaining > 0 && !this.stopping;
      remaining = notBefore - this.clock.now().getTime()
    )
      await sleep(Math.min(remaining, BUDGET_POLL_MS), undefined, { ref: false });
  }

  /** Syncs one miner; adds its uid to `missed` when the sync failed by the miner's fault. */
  private async syncMiner(
    queued: ServingMiner,
    report: IndexSyncReport,
    missed: number[],
  ): Promise<IndexRow[] | undefined> {
    // A metagraph applied since the queue was built (a sync runs for minutes, a budget wait up
    // to 10 of them) may have given the uid to another hotkey: the call would go to the old
    // owner, and what it did (credibility, the circuit) would be recorded by uid, on the new one.
    // Or given the miner another axon: it is called where it serves now, not at the queued
    // record's old address (someone else's now, or nobody's).
    const miner = this.network.registeredMiner(queued.uid, queued.hotkey);
    if (miner === undefined) {
      countSkip(report, 'replaced');
      this.logger.warn(
        `miner ${queued.uid}: index not fetched: ${new MinerReplacedError(queued.uid, queued.hotkey).message}`,
      );
      return undefined;
    }
    if (!isServing(miner)) {
      // Counted missed at the run's end when it serves no axon (minersWithoutAxon).
      const none = miner.axonUrl === null;
      countSkip(report, none ? 'no_axon' : 'address_refused');
      this.logger.warn(
        `miner ${miner.uid}: index not fetched: ${none ? 'it serves no axon now' : 'its axon is at a refused address now'}`,
      );
      return undefined;
    }
    try {
      const rows = await this.network.fetchMinerIndex(miner, this.clock.now());
      await this.index.replaceMinerIndex(miner.uid, rows, {
        hotkey: miner.hotkey,
        validatorMinStake: this.config.network.validatorMinStake,
      });
      report.synced++;
      report.rows += rows.length;
      return rows;
    } catch (error) {
      if (error instanceof InvalidIndexError || error instanceof WrongAnswerError) {
        report.rejected++;
        missed.push(miner.uid);
        this.logger.warn(`miner ${miner.uid}: index rejected, previous one kept: ${error.message}`);
      } else if (error instanceof MinerCallError && NOT_THE_MINERS_FAULT.has(error.reason)) {
        countSkip(report, error.reason);
      } else if (error instanceof MinerCallError) {
        report.failed++;
        missed.push(miner.uid);
        this.logger.warn(
          `miner ${miner.uid}: index not fetched (${error.reason}): ${error.message}`,
        );
      } else if (error instanceof MinerReplacedError) {
        // The metagraph moved on during the run: not the miner's fault, nor ours.
        report.failed++;
        this.logger.warn(`miner ${miner.uid}: index not stored: ${error.message}`);
      } else {
        // Ours (Postgres away…): the miner answered.
        report.failed++;
        this.logger.error(`miner ${miner.uid}: index not stored: ${(error as Error).message}`);
      }
      return undefined;
    }
  }

  private logProgress(report: IndexSyncReport, started: number): void {
    this.logger.log(`index sync: ${this.minersLine(report, (performance.now() - started) / 1000)}`);
  }

  /**
   * The run's last line, told apart from the queue's end (which reads the same miners): what the
   * spot checks and the drops after the queue did, so that an operator sees it without metrics.
   */
  private logEnd(report: IndexSyncReport): void {
    if (this.stopping) {
      // Neither spot checks nor drops ran (see the class comment).
      this.logger.log(
        `index sync cut short by shutdown after ${report.seconds} s: ${this.minersLine(report, report.seconds)}`,
      );
      return;
    }
    const checks = report.spotChecks;
    const withProblems = checks.filter((check) => check.problems.length > 0).length;
    this.logger.log(
      `index sync finished in ${report.seconds} s: ${this.minersLine(report, report.seconds)}; ` +
        `${checks.length} spot checks (${withProblems} with problems), ` +
        `${report.staleDropped.length} stale indexes dropped, ` +
        `${report.oldRowsDropped} rows of expired hours dropped`,
    );
  }

  /** The miners' part of a line, its rows/s over `seconds` (the line's own, where it names one). */
  private minersLine(report: IndexSyncReport, seconds: number): string {
    const done = report.synced + report.rejected + report.failed + report.skipped;
    const skipped = Object.entries(report.skippedReasons)
      .map(([reason, count]) => `${reason}: ${count}`)
      .join(', ');
    return (
      `${done}/${report.miners} miners, ${report.rows} rows loaded, ${Math.round(report.rows / Math.max(seconds, 0.001))} rows/s` +
      (report.rejected + report.failed > 0
        ? `, ${report.rejected} rejected, ${report.failed} failed`
        : '') +
      (report.skipped > 0 ? `, ${report.skipped} skipped (${skipped})` : '')
    );
  }
}

function countSkip(report: IndexSyncReport, reason: SkipReason): void {
  report.skipped++;
  report.skippedReasons[reason] = (report.skippedReasons[reason] ?? 0) + 1;
}
