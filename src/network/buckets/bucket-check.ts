import { parseIsoDate } from '../../common/validation/iso-date';
import { canonicalItem, itemKey } from '../item-uri';
import { BucketKey, bucketEnd, bucketStart } from '../protocol';
import { Source } from '../../common/source';
import { sourceOfId } from '../sources';
import { convertEntity } from '../sn13/entities';
import { coversClaim, deliveryScore } from '../delivery-score';
import { ItemToStore } from '../stored/item-store';
import { MinerCallError } from '../transport/miner-failures';

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
 * must add up to at least the size the index claimed for that bucket (coversClaim). An
 * over-claiming miner fails the last check.
 */
export function checkBucket(
  bucket: BucketKey,
  claimedBytes: number,
  entities: readonly unknown[],
): BucketCheckResult {
  const tally = new BucketTally(bucket, claimedBytes, true);
  for (const entity of entities) tally.add(entity);
  return tally.result();
}

/**
 * checkBucket one entity at a time, for an answer read as it arrives (a spot check of a bucket
 * larger than an answer is read whole: BucketReader). With `keepItems` false, the entities that
 * belong are counted, not kept: the result's `items` is empty.
 */
export class BucketTally {
  private readonly source: Source;
  private readonly start: number;
  private readonly end: number;
  private readonly keys = new Set<string>();
  private readonly items: ItemToStore[] = [];
  private sentCount = 0;
  private belongingCount = 0;
  private countedBytes = 0;
  private paddedCount = 0;

  constructor(
    private readonly bucket: BucketKey,
    private readonly claimedBytes: number,
    private readonly keepItems: boolean,
  ) {
    this.source = sourceOfId(bucket.source)!;
    this.start = bucketStart(bucket.timeBucket).getTime();
    this.end = bucketEnd(bucket.timeBucket).getTime();
  }

  /** How many entities were added, whether they belong or not. */
  get added(): number {
    return this.sentCount;
  }

  /** The bytes the entities that belong count toward the claim so far. */
  get counted(): number {
    return this.countedBytes;
  }

  /** How many of them belong to the bucket. */
  get belonging(): number {
    return this.belongingCount;
  }

  add(entity: unknown): void {
    this.sentCount += 1;
    const converted = convertEntity(entity, this.source);
    if (!converted) return;
    const { declaredBytes, contentBytes, countedBytes } = converted;
    const item = canonicalItem(converted.item);
    if (!item) return;
    const time = parseIsoDate(item.datetime)!.getTime();
    const key = itemKey(item);
    const belongs =
      time >= this.start &&
      time < this.end &&
      item.label === this.bucket.label &&
      declaredBytes === contentBytes &&
      !this.keys.has(key);
    this.keys.add(key);
    if (!belongs) return;
    this.belongingCount += 1;
    if (this.keepItems) this.items.push({ item, timeBucket: this.bucket.timeBucket, contentBytes });
    this.countedBytes += countedBytes;
    if (countedBytes < contentBytes) this.paddedCount += 1;
  }

  result(): BucketCheckResult {
    const { added: sent, belonging, claimedBytes, counted: returnedBytes } = this;
    const problems: string[] = [];
    if (belonging < sent)
      problems.push(`${sent - belonging} of ${sent} entities do not belong to the bucket`);
    if (this.paddedCount > 0)
      problems.push(
        `${this.paddedCount} records padded far beyond their posts (counted at their posts' size)`,
      );
    // More than claimed costs nothing, as in the GetContentsByBuckets check: the bucket of the
    // hour in progress grows after the index is sent, and an index stored before this sync's is
    // older still; the subnet's validator never fails a bucket for holding more (its
    // `are_entities_valid` fails one whose bytes fall short of what its entities declare). A
    // fidelity audit: an honest miner lost credibility for its bucket's growth.
    if (!coversClaim(claimedBytes, returnedBytes))
      problems.push(`claimed ${claimedBytes} bytes, returned ${returnedBytes}`);
    return {
      score: deliveryScore(sent, belonging, claimedBytes, returnedBytes),
      problems,
      items: this.items,
    };
  }
}

/**
 * An honest answer read as it arrives carries 1.3 to 2 times what its entities count toward the
 * claim (a record travels escaped inside JSON, with its uri, time and label): past this many
 * times, and WASTE_ALLOWANCE_BYTES, it carries mostly what counts for nothing.
 */
const ANSWER_PER_COUNTED = 4;
const WASTE_ALLOWANCE_BYTES = 1024 * 1024;

/**
 * The answer's chunks while it is worth reading: one that carries mostly padding, entities of
 * another bucket or values that are no entities is refused there, unread (`malformed`). Parsed to
 * the end, such an answer to a 128 MiB claim held the event loop for 50 s of CPU, the cheapest
 * answers to send being the dearest to parse, where a native JSON.parse of the 16 MiB an answer
 * read whole may carry takes 0.1 s (a hostile-miner audit's finding).
 */
export async function* worthReading(
  chunks: AsyncIterable<Buffer>,
  tally: BucketTally,
): AsyncGenerator<Buffer> {
  let read = 0;
  for await (const chunk of chunks) {
    read += chunk.byteLength;
    if (read > ANSWER_PER_COUNTED * tally.counted + WASTE_ALLOWANCE_BYTES)
      throw new MinerCallError(
        'malformed',
        `response carries ${read} bytes where its entities count ${tally.counted} toward the claim: not read further`,
      );
    yield chunk;
  }
}
