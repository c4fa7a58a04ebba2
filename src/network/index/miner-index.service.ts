import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SourceId } from '../sources';
import { IndexRow } from './compressed-index';
import {
  AgeSizeRow,
  BucketHolder,
  BucketHolding,
  LabelSizeRow,
  MinerIndexReadRepository,
} from './miner-index-read.repository';
import { IndexFreshness } from '../network-status';
import { IndexLabelsRepository } from './index-labels.repository';
import { IndexTotalsRepository } from './index-totals.repository';
import { FetchedFrom, MinerIndexRepository } from './miner-index.repository';

/**
 * The miner index's public face: the one way in for everything that reads or writes the miners'
 * index and its totals (the index sync, the metagraph sync, credibility changes, the stats).
 */
@Injectable()
export class MinerIndexService {
  constructor(
    private readonly repository: MinerIndexRepository,
    private readonly totals: IndexTotalsRepository,
    private readonly reads: MinerIndexReadRepository,
    private readonly labels: IndexLabelsRepository,
  ) {}

  /**
   * Replaces one miner's index and its share of the totals; `[]` forgets the miner's index.
   * With `from`, only while the uid is still that miner (else MinerReplacedError).
   */
  replaceMinerIndex(uid: number, rows: readonly IndexRow[], from?: FetchedFrom): Promise<void> {
    return this.repository.replaceMinerIndex(uid, rows, from);
  }

  /**
   * For a transaction that deregisters uids or gives them new hotkeys: forgets the indexes of
   * `uids` (those that hold one) in it. Call it first, before `lockTotals` or any write to a
   * miner's row; each index leaves the totals at the credibility its bytes are counted at, so
   * the transaction may reset the credibility afterwards. Returns the uids whose index went.
   */
  dropIndexes(manager: EntityManager, uids: readonly number[]): Promise<number[]> {
    return this.repository.dropIndexes(manager, uids);
  }

  /** Counts one more index sync missed by its miner's own fault for each of `uids`. */
  countMissedSyncs(uids: readonly number[]): Promise<void> {
    return this.repository.countMissedSyncs(uids);
  }

  /**
   * Drops the indexes of the miners that missed `missedSyncs` syncs in a row by their own
   * fault (a successful sync starts the count over); returns their uids.
   */
  dropStaleIndexes(missedSyncs: number): Promise<number[]> {
    return this.repository.dropStaleIndexes(missedSyncs);
  }

  /** Removes the hours before `hour` from every index; returns how many rows went. */
  dropHoursBefore(hour: number): Promise<number> {
    return this.repository.dropHoursBefore(hour);
  }

  /** Deletes the labels no index names any longer; returns how many went. */
  dropUnusedLabels(): Promise<number> {
    return this.labels.dropUnused();
  }

  /**
   * For a transaction that changes miners' credibility: call `lockTotals` first (before the
   * miners' rows are locked, as an index replace does), then `propagateCredibility` with each
   * changed miner's difference, so that the adjusted totals move in the same transaction.
   */
  lockTotals(manager: EntityManager): Promise<void> {
    return this.totals.lockTotals(manager);
  }

  propagateCredibility(
    manager: EntityManager,
    uids: readonly number[],
    deltas: readonly number[],
  ): Promise<void> {
    return this.totals.propagateCredibility(manager, uids, deltas);
  }

  /** Changes whenever the totals change: what the stats' caches are keyed by. */
  totalsVersion(): Promise<string> {
    return this.reads.aggregatesVersion();
  }

  /** The source's labels by credibility-adjusted bytes, largest first. */
  topLabels(source: SourceId, limit: number): Promise<LabelSizeRow[]> {
    return this.reads.topLabels(source, limit);
  }

  /** The source's hours holding data from `oldest` on, newest first. */
  ages(source: SourceId, oldest: number, limit: number): Promise<AgeSizeRow[]> {
    return this.reads.ages(source, oldest, limit);
  }

  /** Bytes of a (normalized) label over both sources; zeros for an unknown label. */
  bytesByLabel(label: string): Promise<{ bytes: number; adjBytes: number }> {
    return this.reads.bytesByLabel(label);
  }

  labelId(label: string): Promise<number | undefined> {
    return this.reads.labelId(label);
  }

  /** The newest hour in [from, to] holding data of the source (and label, when given). */
  latestBucket(
    source: SourceId,
    labelId: number | undefined,
    from: number,
    to: number,
    options: { askable?: boolean } = {},
  ): Promise<number | undefined> {
    return this.reads.latestBucket(source, labelId, from, to, options);
  }

  /** Active miners holding the bucket, most credible first (`askable: false`: any holder). */
  holders(
    source: SourceId,
    labelId: number | undefined,
    bucket: number,
    limit: number,
    options: { askable?: boolean } = {},
  ): Promise<BucketHolder[]> {
    return this.reads.holders(source, labelId, bucket, limit, options);
  }

  /** Each of `uids`' claimed bytes over its stored index, for those holding one. */
  claimedBytes(uids: readonly number[]): Promise<Map<number, number>> {
    return this.reads.claimedBytes(uids);
  }

  /** One bucket of the miner's stored index, sampled by its claimed size (none: undefined). */
  sampleBucket(uid: number): Promise<IndexRow | undefined> {
    return this.reads.sampleBucket(uid);
  }

  /**
   * Whether any miner's index is loaded: some miner the stored-data path may ask (active, with
   * an axon) has index rows (miners.index_buckets > 0). False before the first index sync has
   * stored one, and once every index was dropped (each missed its syncs, or was emptied).
   */
  anyIndexLoaded(): Promise<boolean> {
    return this.reads.anyIndexLoaded();
  }

  /**
   * How many miners' indexes hold rows (whatever the miner's state: the statistics sum them
   * all), how many of those the stored-data path may use now (anyIndexLoaded's rule, counted)
   * and why not the others, and when the newest and the oldest were synced: for system-status.
   */
  indexFreshness(): Promise<IndexFreshness> {
    return this.reads.indexFreshness();
  }

  /**
   * Holders of the buckets of `labels` (null: unlabeled) in the newest `maxHours` hours of
   * [from, to] holding any, newest first, most credible first within a bucket: what the
   * stored-data on-demand path plans its fetches from. Page on with `to` below the oldest hour.
   */
  holdings(
    source: SourceId,
    labels: readonly (string | null)[],
    from: number,
    to: number,
    maxHours: number,
  ): Promise<BucketHolding[]> {
    return this.reads.holdings(source, labels, from, to, maxHours);
  }
}
