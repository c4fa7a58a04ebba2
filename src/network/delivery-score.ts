/**
 * What a miner's delivery of a bucket says of its index claim: shared by the GetDataEntityBucket
 * check (buckets/bucket-check.ts) and the GetContentsByBuckets check (stored/contents-check.ts).
 */

/** Claimed and returned sizes may differ this much (serialization details) before it counts. */
export const SIZE_TOLERANCE = 0.1;

/**
 * How far a delivery of a bucket supports the index's claim for it, 0..1: the share of what
 * was sent that belongs to the bucket, times how near the bytes that belong come to the claim
 * (within SIZE_TOLERANCE counts as equal). With `moreIsFine`, sending more than claimed costs
 * nothing (an index claim may be an hour older than the delivery).
 */
export function deliveryScore(
  sent: number,
  belonging: number,
  claimedBytes: number,
  belongingBytes: number,
  moreIsFine = false,
): number {
  const sizeRatio = sizeRatioOf(claimedBytes, belongingBytes);
  const belongingShare = sent === 0 ? (claimedBytes === 0 ? 1 : 0) : belonging / sent;
  const sizeScore =
    Math.abs(1 - sizeRatio) <= SIZE_TOLERANCE || (moreIsFine && sizeRatio > 1)
      ? 1
      : Math.max(0, Math.min(sizeRatio, 1 / sizeRatio));
  return belongingShare * sizeScore;
}

export function sizeRatioOf(claimedBytes: number, returnedBytes: number): number {
  return claimedBytes === 0 ? (returnedBytes === 0 ? 1 : Infinity) : returnedBytes / claimedBytes;
}
