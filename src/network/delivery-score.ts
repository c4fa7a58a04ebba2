/**
 * What a miner's delivery of a bucket says of its index claim: shared by the GetDataEntityBucket
 * check (buckets/bucket-check.ts) and the GetContentsByBuckets check (stored/contents-check.ts).
 */

/**
 * Claimed and returned sizes may differ by one part in this many of the claim (serialization
 * details) before it counts: a tenth.
 */
const SIZE_TOLERANCE_PARTS = 10;

/**
 * Whether `bytes` is the claim within the tolerance, either way. Compared in whole bytes: as a
 * ratio, 10 % over came out as 0.10000000000000009 and missed, where 10 % under passed.
 */
export function withinSizeTolerance(claimedBytes: number, bytes: number): boolean {
  return Math.abs(bytes - claimedBytes) * SIZE_TOLERANCE_PARTS <= claimedBytes;
}

/**
 * Whether `bytes` delivered cover the claim: as much or more (a claim may be older than the
 * delivery: the bucket of the hour in progress grows after the index is sent, and the subnet's
 * validator never fails a bucket for holding more), or less by no more than the tolerance.
 */
export function coversClaim(claimedBytes: number, bytes: number): boolean {
  return bytes >= claimedBytes || withinSizeTolerance(claimedBytes, bytes);
}

/**
 * How far a delivery of a bucket supports the index's claim for it, 0..1: the share of what
 * was sent that belongs to the bucket, times how near the bytes that belong come up to the claim
 * (coversClaim counts as complete).
 */
export function deliveryScore(
  sent: number,
  belonging: number,
  claimedBytes: number,
  belongingBytes: number,
): number {
  const belongingShare = sent === 0 ? (claimedBytes === 0 ? 1 : 0) : belonging / sent;
  const sizeScore = coversClaim(claimedBytes, belongingBytes) ? 1 : belongingBytes / claimedBytes;
  return belongingShare * sizeScore;
}
