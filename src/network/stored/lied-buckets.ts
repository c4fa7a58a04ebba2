import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { MINER_LIMIT_WINDOW_MS } from '../../config/miner-call-limits';
import { BucketKey } from '../protocol';
import { MinerCooldowns } from '../transport/miner-cooldowns';
import { bucketKeyOf } from './bucket-selection';

/**
 * Holders whose delivery of a bucket the checks dropped whole (isDroppedWhole: records, none of
 * the bucket), not asked for that bucket again for the miner's window: such a delivery is not
 * kept (deliveriesToKeep), so the bucket stays missing and every query asked the same holder
 * again, each time a call of its few an hour (8 GetContentsByBuckets, 1 GetDataEntityBucket
 * beside a validator) spent on the same lie. An hour on, its index has been re-read and its
 * budget renewed. Per process, as the refusals' cooldowns are: each replica learns it with one
 * call. Read by the stored path (StoredDataService) and query_bucket (BucketReader).
 */
@Injectable()
export class LiedBuckets {
  private readonly cooldowns: MinerCooldowns<'invalid_items'>;

  constructor(clock: Clock) {
    this.cooldowns = new MinerCooldowns(() => clock.now().getTime());
  }

  record(hotkey: string, bucket: BucketKey): void {
    this.cooldowns.start(hotkey, bucketKeyOf(bucket), 'invalid_items', MINER_LIMIT_WINDOW_MS);
  }

  /** True while the holder's last delivery of the bucket was dropped whole, within the hour. */
  lied(hotkey: string, bucket: BucketKey): boolean {
    return this.cooldowns.active(hotkey, bucketKeyOf(bucket)) !== undefined;
  }
}
