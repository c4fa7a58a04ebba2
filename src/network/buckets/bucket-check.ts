import { parseIsoDate } from '../../common/validation/iso-date';
import { canonicalItem, itemKey } from '../item-uri';
import { BucketKey, bucketEnd, bucketStart } from '../protocol';
import { sourceOfId } from '../sources';
import { convertEntity } from '../sn13/entities';
import { deliveryScore, withinSizeTolerance } from '../delivery-score';
import { ItemToStore } from '../stored/item-store';

export interface BucketCheckResult {
  /** 0..1: how far the returned bucket supports what the index claimed. */
  score: number;
  problems: string[];
  /** The entities that belong to the bucket, as items with the byte size of their record. */
  items: ItemToStore[];
}

/**
 * Checks a miner's GetDataEntityBucket answer against its own index: every entity must be a
 * well-formed record that belongs to the bucket (hour, source, label) with a uri that names it
 * (item-uri.ts; such a uri is stored and served, in its canonical form), posts must be unique
 * (however their uris are spelled), each
 * entity's declared size must be the byte length of the record it carries, and together they
 * must add up to the size the index claimed for that bucket (withinSizeTolerance). An
 * over-claiming miner fails the last check.
 */
export function checkBucket(
  bucket: BucketKey,
  claimedBytes: number,
  entities: readonly unknown[],
): BucketCheckResult {
  const source = sourceOfId(bucket.source)!;
  const start = bucketStart(bucket.timeBucket).getTime();
  const end = bucketEnd(bucket.timeBucket).getTime();
  const keys = new Set<string>();
  const items: ItemToStore[] = [];
  let returnedBytes = 0;

  for (const entity of entities) {
    const converted = convertEntity(entity, source);
    if (!converted) continue;
    const { declaredBytes, contentBytes } = converted;
    const item = canonicalItem(converted.item);
    if (!item) continue;
    const time = parseIsoDate(item.datetime)!.getTime();
    const key = itemKey(item);
    const belongs =
      time >= start &&
      time < end &&
      item.label === bucket.label &&
      declaredBytes === contentBytes &&
      !keys.has(key);
    keys.add(key);
    if (!belongs) continue;
    items.push({ item, timeBucket: bucket.timeBucket, contentBytes });
    returnedBytes += declaredBytes;
  }
  const problems: string[] = [];
  if (items.length < entities.length)
    problems.push(
      `${entities.length - items.length} of ${entities.length} entities do not belong to the bucket`,
    );
  if (!withinSizeTolerance(claimedBytes, returnedBytes))
    problems.push(`claimed ${claimedBytes} bytes, returned ${returnedBytes}`);
  return {
    score: deliveryScore(entities.length, items.length, claimedBytes, returnedBytes),
    problems,
    items,
  };
}
