import { Logger } from '@nestjs/common';
import { minerFields } from '../../common/logging/miner-fields';
import { debugEnabled } from '../../common/logging/debug-lines';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { IndexRow, InvalidIndexError } from '../index/compressed-index';
import { MinerReplacedError } from '../index/miner-index.repository';
import { MinerIndexService } from '../index/miner-index.service';
import { isServing, ServingMiner } from '../miner.entity';
import { NetworkService } from '../network.service';
import { WrongAnswerError } from '../sn13/messages';
import {
  BudgetUnreadableError,
  MinerCallError,
  NOT_THE_MINERS_FAULT,
  refusedWhenSent,
} from '../transport/miner-failures';
import { countSkip, IndexSyncReport } from './index-sync-report';

/**
 * One miner's turn in an index sync: is the queued miner still the uid's, at an axon we may call;
 * then its GetMinerIndex fetched (NetworkService.fetchMinerIndex parses and checks it, and a
 * rejected index costs credibility there) and stored in place of its previous one. What became
 * of it goes into the run's report, and whether it counts against the miner (a missed sync) is
 * decided here, where the error is known. Part of IndexSyncService, which builds it and lends it
 * its logger.
 */
export class MinerSync {
  /** The run whose unreadable budget was warned of: once a run. */
  private budgetWarned: IndexSyncReport | undefined;

  constructor(
    private readonly network: NetworkService,
    private readonly index: MinerIndexService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly logger: Logger,
  ) {}

  /** Syncs one miner; adds its uid to `missed` when the sync failed by the miner's fault. */
  async sync(
    queued: ServingMiner,
    report: IndexSyncReport,
    missed: number[],
  ): Promise<IndexRow[] | undefined> {
    // A metagraph applied since the queue was built (a sync runs for minutes, a budget wait up
    // to 10 of them) may have given the uid to another hotkey: the call would go to the old
    // owner, a call of its budget spent for an index the sync no longer stores under the uid.
    // Or given the miner another axon: it is called where it serves now, not at the queued
    // record's old address (someone else's now, or nobody's).
    const miner = this.network.registeredMiner(queued.uid, queued.hotkey);
    if (miner === undefined) {
      countSkip(report, 'replaced');
      this.logger.warn(
        minerFields(queued),
        `miner ${queued.uid}: index not fetched: ${new MinerReplacedError(queued.uid, queued.hotkey).message}`,
      );
      return undefined;
    }
    if (!isServing(miner)) {
      // Counted missed at the run's end, as every miner never called is (minersNeverCalled).
      const none = miner.axonUrl === null;
      countSkip(report, none ? 'no_axon' : 'address_refused');
      this.logger.warn(
        minerFields(miner),
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
      if (debugEnabled())
        this.logger.debug(
          { ...minerFields(miner), rows: rows.length },
          `miner ${miner.uid}: index of ${rows.length} rows stored`,
        );
      return rows;
    } catch (error) {
      if (error instanceof InvalidIndexError || error instanceof WrongAnswerError) {
        report.rejected++;
        missed.push(miner.uid);
        this.logger.warn(
          minerFields(miner),
          `miner ${miner.uid}: index rejected, previous one kept: ${error.message}`,
        );
      } else if (error instanceof MinerCallError && NOT_THE_MINERS_FAULT.has(error.reason)) {
        countSkip(report, error.reason);
        // A refusal it sent (403, 404, 401, 503) misses the sync too, counted only in a run that
        // reached another miner (OutdatedDrops): refusing every index call after one sync kept
        // an index's claims in the statistics for good (a hostile-miner audit's finding).
        if (refusedWhenSent(error)) missed.push(miner.uid);
        // Ours: said once a run, as a budget that could not be read (a connection refused, a
        // role's connection limit reached) is no miner's spent budget. At debug only, it hid
        // the cause behind the end line's `no_budget` (a hosted-Postgres audit).
        if (error instanceof BudgetUnreadableError && this.budgetWarned !== report) {
          this.budgetWarned = report;
          this.logger.warn(
            minerFields(miner),
            `miner ${miner.uid}: index not fetched: ${error.message}; the run's other miners ` +
              'skipped for it are counted as no_budget in its end line',
          );
        } else if (debugEnabled())
          // Not the miner's doing (no budget, shutdown…): counted in the round's line, named here.
          this.logger.debug(
            { ...minerFields(miner), skipped: error.reason },
            `miner ${miner.uid}: index not fetched (${error.reason}): ${error.message}`,
          );
      } else if (error instanceof MinerCallError) {
        report.failed++;
        missed.push(miner.uid);
        this.logger.warn(
          minerFields(miner),
          `miner ${miner.uid}: index not fetched (${error.reason}): ${error.message}`,
        );
      } else if (error instanceof MinerReplacedError) {
        // The metagraph moved on during the run: not the miner's fault, nor ours.
        report.failed++;
        this.logger.warn(
          minerFields(miner),
          `miner ${miner.uid}: index not stored: ${error.message}`,
        );
      } else {
        // Ours (Postgres away…): the miner answered.
        report.failed++;
        this.logger.error(
          minerFields(miner),
          `miner ${miner.uid}: index not stored: ${(error as Error).message}`,
        );
      }
      return undefined;
    }
  }
}
