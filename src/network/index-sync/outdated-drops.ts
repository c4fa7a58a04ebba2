import { STALE_AFTER_SYNCS } from '../network-status';
import { Logger } from '@nestjs/common';
import { DAY_MS } from '../../common/clock/durations';
import { Clock } from '../../common/clock/clock';
import { MinerIndexService } from '../index/miner-index.service';
import { NetworkService } from '../network.service';
import { MAX_DATA_AGE_DAYS, oldestUsefulBucket } from '../protocol';
import { calledSomeMiner, IndexSyncReport } from './index-sync-report';

/**
 * The end of an index sync run, after its spot checks: what the run says of the miners is
 * counted (missed syncs), and what no longer counts is dropped: stale indexes, hours past the
 * retention, labels no index names, old bucket fetches. Kept apart from the run because it is
 * the one step that forgets data rather than adding it. Part of IndexSyncService, which builds
 * it, lends it its logger, and skips it on a run cut short by shutdown.
 */
export class OutdatedDrops {
  constructor(
    private readonly network: NetworkService,
    private readonly index: MinerIndexService,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Counts the syncs the `missed` uids missed by their own fault, and the miners never called
   * (no axon, or a refused address), then drops what no longer counts: stale indexes, hours past
   * the retention, labels no index names, old bucket fetches.
   */
  async drop(report: IndexSyncReport, missed: readonly number[]): Promise<void> {
    const now = this.clock.now();
    // A run that reached no miner at all (each one failed, none answered even with an index we
    // rejected) says more about our own network than about theirs: three such runs would have
    // dropped every index. A miner without an axon is the chain's word, not our network's: it
    // took its axon down (or never served one), and no validator can reach it either. One at an
    // address refused is never called: left, its index stayed in the statistics as it was,
    // unchecked, until its hours aged out (a review: a neuron of a second coldkey at an
    // operator's own address froze that operator's index so).
    // A run that called no miner is no sync (calledSomeMiner): it is retried within seconds to
    // minutes, and counting the miners without an axon at each would drop their indexes in a
    // minute rather than after STALE_AFTER_SYNCS syncs.
    const reached = report.synced + report.rejected > 0;
    if (calledSomeMiner(report))
      await this.index.countMissedSyncs([
        ...(reached ? missed : []),
        ...this.network.minersNeverCalled(),
      ]);
    report.staleDropped = await this.index.dropStaleIndexes(STALE_AFTER_SYNCS);
    if (report.staleDropped.length > 0)
      this.logger.warn(
        `indexes of uids ${report.staleDropped.join(', ')} dropped: ${STALE_AFTER_SYNCS} ` +
          'index syncs in a row missed by their own fault',
      );
    report.oldRowsDropped = await this.index.dropHoursBefore(oldestUsefulBucket(now));
    const retention = MAX_DATA_AGE_DAYS * DAY_MS;
    report.storedDaysDropped = await this.network.deleteBucketFetchesBefore(
      new Date(now.getTime() - retention),
    );
    // Last, and its failure only warned of: the labels wait for the next sync, nothing else does.
    report.labelsDropped = await this.index.dropUnusedLabels().catch((error: Error) => {
      this.logger.warn(`labels no index names not deleted: ${error.message}`);
      return 0;
    });
  }
}
