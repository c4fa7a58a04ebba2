import { Injectable, Logger } from '@nestjs/common';
import { minerFields } from '../../common/logging/miner-fields';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { isDroppedWhole } from '../answer-checks';
import { CredibilityRecorder } from '../credibility-recorder';
import {
  getContentsByBucketsFields,
  getDataEntityBucketFields,
  readBucketContents,
  readEntityList,
} from '../sn13/messages';
import { MinerClient } from '../transport/miner-client';
import { failureReasonOf, failureScore, isBudgetSpent } from '../transport/miner-failures';
import { MinerFailureReason } from '../query-failures';
import { QueryPurpose } from '../transport/call-budgets';
import { bucketKeyOf } from './bucket-selection';
import { CheckedContents, checkContents, checkEntities, deliveriesToKeep } from './contents-check';
import { PlannedCall } from './holder-choice';
import { ItemStore } from './item-store';
import { LiedBuckets } from './lied-buckets';

/** What one call to a holder came to. */
export interface CallReport {
  uid: number;
  /** Undefined when the miner answered; else why the call failed. */
  failure?: MinerFailureReason;
  /**
   * Refused unsent: other queries spent the miner's last calls since the round was planned
   * (isBudgetSpent; not a budget that could not be read).
   */
  budgetSpent?: true;
  /** Contents the miner sent, and those dropped by the checks. */
  returned: number;
  dropped: number;
  /** 0..1, what the answer says of the miner (0 for its own failures). */
  score: number | null;
  /** Keys (bucketKeyOf) of the buckets whose delivery is now in the store. */
  delivered: Set<string>;
}

/**
 * Makes one planned call (GetContentsByBuckets, or GetDataEntityBucket for an unlabeled
 * bucket), checks the answer, keeps each bucket's checked delivery in the item store (one
 * dropped whole is remembered as a lie instead: LiedBuckets) and moves the miner's
 * credibility. Never throws: a failure is reported.
 */
@Injectable()
export class ContentsFetcher {
  private readonly logger = new Logger(ContentsFetcher.name);

  constructor(
    private readonly client: MinerClient,
    private readonly store: ItemStore,
    private readonly lies: LiedBuckets,
    private readonly credibility: CredibilityRecorder,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * `purpose`: a task's call leaves users their reserve of the budget; users' and tasks'
   * GetDataEntityBucket calls leave the spot checks theirs (CallBudgets).
   */
  async run(call: PlannedCall, purpose: QueryPurpose = 'user'): Promise<CallReport> {
    const { holder } = call;
    let checked: CheckedContents;
    try {
      checked = await this.ask(call, purpose);
    } catch (error) {
      const failure = failureReasonOf(error);
      const score = failureScore(failure);
      this.credibility.record([{ uid: holder.uid, hotkey: holder.hotkey, score }]);
      return {
        uid: holder.uid,
        failure,
        ...(isBudgetSpent(error) ? { budgetSpent: true as const } : {}),
        returned: 0,
        dropped: 0,
        score,
        delivered: new Set(),
      };
    }
    this.credibility.record([{ uid: holder.uid, hotkey: holder.hotkey, score: checked.score }]);
    const fetchedAt = this.clock.now();
    const delivered = new Set<string>();
    const kept = deliveriesToKeep(checked);
    for (const delivery of checked.deliveries)
      if (isDroppedWhole(delivery)) this.lies.record(holder.hotkey, delivery.bucket);
    try {
      await this.store.save(
        ...kept.map((delivery) => ({
          bucket: delivery.bucket,
          minerUid: holder.uid,
          minerHotkey: holder.hotkey,
          fetchedAt,
          claimedBytes: delivery.claimedBytes,
          items: delivery.items,
        })),
      );
      for (const delivery of kept) delivered.add(bucketKeyOf(delivery.bucket));
    } catch (error) {
      // Not keeping it (Postgres away) is no fault of the miner's.
      this.logger.warn(
        minerFields(holder),
        `delivery of miner ${holder.uid} not kept: ${(error as Error).message}`,
      );
    }
    return {
      uid: holder.uid,
      returned: checked.returned,
      dropped: checked.dropped,
      score: checked.score,
      delivered,
    };
  }

  private async ask(call: PlannedCall, purpose: QueryPurpose): Promise<CheckedContents> {
    const timeoutMs = this.config.network.bucketFetchTimeoutMs;
    const target = {
      uid: call.holder.uid,
      hotkey: call.holder.hotkey,
      axonUrl: call.holder.axonUrl,
    };
    if (call.synapse === 'GetDataEntityBucket') {
      const [asked] = call.buckets;
      const reply = await this.client.call(
        target,
        'GetDataEntityBucket',
        getDataEntityBucketFields(asked.bucket),
        timeoutMs,
        purpose,
      );
      return checkEntities(
        asked,
        reply.read((body) => readEntityList(body, 'data_entities')),
      );
    }
    const reply = await this.client.call(
      target,
      'GetContentsByBuckets',
      getContentsByBucketsFields(call.buckets.map((asked) => asked.bucket)),
      timeoutMs,
      purpose,
    );
    return checkContents(call.buckets, reply.read(readBucketContents));
  }
}
