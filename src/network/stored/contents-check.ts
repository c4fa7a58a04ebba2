import { isRecord } from '../../common/is-record';
import { Source } from '../../common/source';
import { withUnprintablesEscaped } from '../../common/validation/control-characters';
import { parseIsoDate } from '../../common/validation/iso-date';
import { isDroppedWhole } from '../answer-checks';
import { deliveryScore } from '../delivery-score';
import { canonicalItem, itemKey } from '../item-uri';
import { BucketKey, bucketEnd, bucketStart, cutLabel, DataItem, normalizeLabel } from '../protocol';
import { BucketContents, wireBucketId } from '../sn13/messages';
import { ConvertedEntity, convertContent, convertEntity } from '../sn13/entities';
import { sourceOfId } from '../sources';
import { bucketKeyOf } from './bucket-selection';
import { AskedBucket } from './holder-choice';
import { ItemToStore } from './item-store';

/**
 * Checks a miner's GetContentsByBuckets answer. Miners are untrusted: a content is kept only
 * when it is a well-formed stored record of the bucket's source, dated inside the bucket's hour,
 * filed under the bucket's label, with a uri that agrees with the record, within the size caps,
 * in a bucket that was asked for, and not a repeat of a post already kept (item-uri.ts's
 * itemKey). Kept items carry their uri in canonical form. What fails is dropped
 * and lowers the miner's score, as does delivering far less than its index claimed.
 */

/** A stored record larger than this is not a post (a Reddit post's 40,000 characters fit). */
export const MAX_CONTENT_BYTES = 256 * 1024;
/** Contents one answer may carry (the subnet's own cap); the rest are dropped. */
export const MAX_CONTENTS_PER_ANSWER = 200_000;

export interface CheckedDelivery extends AskedBucket {
  items: ItemToStore[];
  /** Contents the miner sent for the bucket, and those dropped. */
  returned: number;
  dropped: number;
  /** Record bytes of the kept items. */
  bytes: number;
  /** 0..1, the delivery score (delivery-score.ts; sending more than claimed is fine). */
  score: number;
}

export interface CheckedContents {
  /** One per asked bucket, in the order asked (an absent bucket: nothing delivered). */
  deliveries: CheckedDelivery[];
  /** Every content of the answer, and those dropped (contents of buckets not asked included). */
  returned: number;
  dropped: number;
  /** 0..1: the deliveries' mean score, scaled down by the share of contents sent unasked. */
  score: number;
  problems: string[];
}

export function checkContents(
  asked: readonly AskedBucket[],
  pairs: readonly BucketContents[],
): CheckedContents {
  return checkPairs(asked, pairs, readContent);
}

/**
 * The deliveries to keep in the store: not one whose every content the checks dropped
 * (isDroppedWhole). Kept, it was stored as the bucket's contents, no items, and while fresh
 * answered queries of the bucket as "no data" when its miner had only lied (a review's finding);
 * not kept, the bucket is missing, and the next query asks again.
 */
export function deliveriesToKeep(checked: CheckedContents): CheckedDelivery[] {
  return checked.deliveries.filter((delivery) => !isDroppedWhole(delivery));
}

/**
 * Checks a GetDataEntityBucket answer for one bucket (how unlabeled buckets are fetched) by the
 * same rules; each entity's declared size must also be the byte length of its record.
 */
export function checkEntities(asked: AskedBucket, entities: readonly unknown[]): CheckedContents {
  return checkPairs(
    [asked],
    [{ bucketId: wireBucketId(asked.bucket), contents: [...entities] }],
    readEntity,
  );
}

type Reader = (value: unknown, source: Source) => ConvertedEntity | undefined;

function readContent(value: unknown, source: Source): ConvertedEntity | undefined {
  if (typeof value !== 'string' || value.length > MAX_CONTENT_BYTES) return undefined;
  return convertContent(value, source);
}

function readEntity(value: unknown, source: Source): ConvertedEntity | undefined {
  const converted = convertEntity(value, source);
  return converted && converted.declaredBytes === converted.contentBytes ? converted : undefined;
}

function checkPairs(
  asked: readonly AskedBucket[],
  pairs: readonly BucketContents[],
  read: Reader,
): CheckedContents {
  const deliveries = new Map<string, CheckedDelivery>(
    asked.map((entry) => [
      bucketKeyOf(entry.bucket),
      { ...entry, items: [], returned: 0, dropped: 0, bytes: 0, score: 0 },
    ]),
  );
  const seen = new Set<string>();
  const problems: string[] = [];
  let returned = 0;
  let unasked = 0;
  let checked = 0;
  for (const pair of pairs) {
    const bucket = bucketOfWireId(pair.bucketId);
    const delivery = bucket ? deliveries.get(bucketKeyOf(bucket)) : undefined;
    returned += pair.contents.length;
    if (!delivery) {
      unasked += pair.contents.length;
      problems.push(`${pair.contents.length} contents under a bucket id that was not asked for`);
      continue;
    }
    for (const content of pair.contents) {
      delivery.returned++;
      checked++;
      const checkedContent =
        checked <= MAX_CONTENTS_PER_ANSWER
          ? checkedItem(read, content, delivery.bucket, seen)
          : undefined;
      if (!checkedContent) continue;
      const { item, countedBytes } = checkedContent;
      seen.add(itemKey(item.item));
      delivery.items.push(item);
      delivery.bytes += countedBytes;
    }
  }
  let dropped = unasked;
  for (const delivery of deliveries.values()) {
    delivery.dropped = delivery.returned - delivery.items.length;
    dropped += delivery.dropped;
    delivery.score = deliveryScore(
      delivery.returned,
      delivery.items.length,
      delivery.claimedBytes,
      delivery.bytes,
    );
    if (delivery.dropped > 0)
      problems.push(
        `${delivery.dropped} of ${delivery.returned} contents do not belong to bucket ${delivery.bucket.timeBucket} ${withUnprintablesEscaped(String(delivery.bucket.label))}`,
      );
  }
  const list = [...deliveries.values()];
  const mean = list.reduce((sum, delivery) => sum + delivery.score, 0) / Math.max(1, list.length);
  const score = returned === 0 ? mean : mean * (1 - unasked / returned);
  return { deliveries: list, returned, dropped, score, problems };
}

/**
 * The kept item, its uri in canonical form, with what it counts toward the claim
 * (countedBytesOf), or undefined when the content fails a check (or repeats a kept post, however
 * its uri is spelled).
 */
function checkedItem(
  read: Reader,
  content: unknown,
  bucket: BucketKey,
  seen: ReadonlySet<string>,
): { item: ItemToStore; countedBytes: number } | undefined {
  const source = sourceOfId(bucket.source);
  const converted = source === undefined ? undefined : read(content, source);
  if (!converted || converted.contentBytes > MAX_CONTENT_BYTES) return undefined;
  const item = canonicalItem(converted.item);
  if (!item) return undefined;
  const time = parseIsoDate(item.datetime)!.getTime();
  if (
    time < bucketStart(bucket.timeBucket).getTime() ||
    time >= bucketEnd(bucket.timeBucket).getTime()
  )
    return undefined;
  if (filedLabel(item) !== bucket.label || seen.has(itemKey(item))) return undefined;
  return {
    item: { item, timeBucket: bucket.timeBucket, contentBytes: converted.contentBytes },
    countedBytes: converted.countedBytes,
  };
}

/**
 * The label a miner files the item under: X, its first hashtag lower-cased and cut to 140
 * characters, a cashtag as a hashtag (`$AAPL` → `#aapl`), none without one; Reddit, its
 * subreddit.
 */
export function filedLabel(item: DataItem): string | null {
  if (item.source === 'REDDIT') return item.label;
  const first = item.tweet.hashtags[0];
  if (first === undefined) return null;
  const lower = first.trim().toLowerCase();
  return cutLabel(lower.startsWith('$') ? `#${lower.slice(1)}` : lower);
}

/**
 * The bucket a miner's echoed bucket id names, or undefined when it is not a well-formed id. The
 * label is read as an index's is (trimmed, lower-cased, empty = none): the subnet's Postgres
 * storage keeps labels in a `CHAR(32)` column and echoes them padded with spaces.
 */
export function bucketOfWireId(value: unknown): BucketKey | undefined {
  if (!isRecord(value) || !isRecord(value.time_bucket)) return undefined;
  const id = value.time_bucket.id;
  const source = value.source;
  if (!Number.isSafeInteger(id) || (source !== 1 && source !== 2)) return undefined;
  const label = value.label;
  if (label === null || label === undefined)
    return { source, label: null, timeBucket: id as number };
  if (!isRecord(label) || typeof label.value !== 'string') return undefined;
  const normalized = normalizeLabel(label.value);
  return { source, label: normalized === '' ? null : normalized, timeBucket: id as number };
}
