import { parseIsoDate } from '../iso-date';
import {
  bucketEnd,
  bucketStart,
  DataEntityBucketId,
  normalizeLabel,
  sourceFromId,
} from '../protocol';

/** Claimed and returned sizes may differ this much (serialization details) before it counts. */
export const SIZE_TOLERANCE = 0.1;

export interface BucketCheckResult {
  /** 0..1: how far the returned bucket supports what the index claimed. */
  score: number;
  problems: string[];
}

/**
 * Checks a miner's answer to GetDataEntityBucket against its own index: every entity must
 * belong to the bucket (hour, source, label), uris must be unique, each entity's declared size
 * must be the size of its content, and together they must add up to the size the index claimed
 * for that bucket, within SIZE_TOLERANCE. An over-claiming miner fails the last check.
 */
export function checkBucket(
  bucket: DataEntityBucketId,
  claimedBytes: number,
  body: unknown,
): BucketCheckResult {
  const entities = (body as { data_entities?: unknown } | null)?.data_entities;
  if (!Array.isArray(entities))
    return { score: 0, problems: ['response has no `data_entities` list'] };
  const problems: string[] = [];
  const source = sourceFromId(bucket.source);
  const start = bucketStart(bucket.time_bucket_id).getTime();
  const end = bucketEnd(bucket.time_bucket_id).getTime();
  const uris = new Set<string>();
  let belonging = 0;
  let returnedBytes = 0;

  for (const entity of entities) {
    if (typeof entity !== 'object' || entity === null) continue;
    const {
      uri,
      datetime,
      source: entitySource,
      label,
      content_size_bytes: size,
      content,
    } = entity as Record<string, unknown>;
    const time = typeof datetime === 'string' ? parseIsoDate(datetime)?.getTime() : undefined;
    const labelMatches =
      (typeof label === 'string' ? normalizeLabel(label) : null) ===
      (bucket.label === null ? null : normalizeLabel(bucket.label));
    const honestSize = content !== undefined && size === Buffer.byteLength(JSON.stringify(content));
    const unique = typeof uri === 'string' && !uris.has(uri);
    if (typeof uri === 'string') uris.add(uri);
    if (
      time !== undefined &&
      time >= start &&
      time < end &&
      entitySource === source &&
      labelMatches &&
      honestSize &&
      unique
    ) {
      belonging++;
      returnedBytes += size;
    }
  }
  if (belonging < entities.length)
    problems.push(
      `${entities.length - belonging} of ${entities.length} entities do not belong to the bucket`,
    );
  const sizeRatio =
    claimedBytes === 0 ? (returnedBytes === 0 ? 1 : 0) : returnedBytes / claimedBytes;
  if (Math.abs(1 - sizeRatio) > SIZE_TOLERANCE)
    problems.push(`claimed ${claimedBytes} bytes, returned ${returnedBytes}`);

  const belongingShare =
    entities.length === 0 ? (claimedBytes === 0 ? 1 : 0) : belonging / entities.length;
  const sizeScore =
    Math.abs(1 - sizeRatio) <= SIZE_TOLERANCE ? 1 : Math.max(0, Math.min(sizeRatio, 1 / sizeRatio));
  return { score: belongingShare * sizeScore, problems };
}
