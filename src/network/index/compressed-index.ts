import { isRecord } from '../../common/is-record';
import {
  MAX_DATA_AGE_DAYS,
  MAX_INDEX_BUCKETS,
  MAX_LABEL_LENGTH,
  normalizeLabel,
  timeBucketId,
} from '../protocol';
import { SourceId } from '../sn13/sources';

/** One (source, label, hour) a miner claims to hold, with its size. */
export interface IndexRow {
  source: SourceId;
  /** Normalized; null for data without a label. */
  label: string | null;
  timeBucket: number;
  bytes: number;
}

export class InvalidIndexError extends Error {
  override readonly name = 'InvalidIndexError';
}

/**
 * Validates a miner's compressed index (format in docs/miner-protocol.md) and flattens it.
 * Rejects the whole index when it is malformed or claims more than MAX_INDEX_BUCKETS buckets:
 * the miner's previous index then stays. Buckets older than the retention are worth nothing and
 * are skipped; labels are normalized, and entries that collide after normalization are summed.
 */
export function parseCompressedIndex(value: unknown, now: Date): IndexRow[] {
  if (!isRecord(value) || !isRecord(value.sources))
    throw new InvalidIndexError('expected an object with `sources`');
  const oldest = timeBucketId(now) - MAX_DATA_AGE_DAYS * 24;
  const newest = timeBucketId(now) + 1;
  // Rows by (source, label), then by hour: one string key per entry rather than per bucket
  // (this runs over up to 350 k buckets per miner on the ingest path).
  const groups = new Map<string, Map<number, IndexRow>>();
  let claimed = 0;

  for (const [sourceKey, entries] of Object.entries(value.sources)) {
    if (sourceKey !== '1' && sourceKey !== '2')
      throw new InvalidIndexError(`unknown source id ${sourceKey}`);
    if (!Array.isArray(entries)) throw new InvalidIndexError(`sources.${sourceKey} is not a list`);
    const source = Number(sourceKey) as SourceId;
    for (const [index, entry] of entries.entries()) {
      const where = `sources.${sourceKey}[${index}]`;
      if (!isRecord(entry)) throw new InvalidIndexError(`${where} is not an object`);
      const label = parseLabel(entry.label, where);
      const { time_bucket_ids: buckets, sizes_bytes: sizes } = entry;
      if (!Array.isArray(buckets) || !Array.isArray(sizes) || buckets.length !== sizes.length) {
        throw new InvalidIndexError(
          `${where}: time_bucket_ids and sizes_bytes must be lists of equal length`,
        );
      }
      claimed += buckets.length;
      if (claimed > MAX_INDEX_BUCKETS)
        throw new InvalidIndexError(`more than ${MAX_INDEX_BUCKETS} buckets`);
      const groupKey = `${source}|${label ?? ''}`;
      let rows = groups.get(groupKey);
      if (!rows) groups.set(groupKey, (rows = new Map<number, IndexRow>()));
      for (let i = 0; i < buckets.length; i++) {
        const bucket: unknown = buckets[i];
        const bytes: unknown = sizes[i];
        if (
          !Number.isSafeInteger(bucket) ||
          !Number.isSafeInteger(bytes) ||
          (bytes as number) < 0
        ) {
          throw new InvalidIndexError(
            `${where}: bucket ${i} is not a whole hour with a non-negative size`,
          );
        }
        if ((bucket as number) > newest)
          throw new InvalidIndexError(`${where}: bucket ${String(bucket)} is in the future`);
        if ((bucket as number) < oldest || bytes === 0) continue;
        const row = rows.get(bucket as number);
        if (row) row.bytes += bytes as number;
        else
          rows.set(bucket as number, {
            source,
            label,
            timeBucket: bucket as number,
            bytes: bytes as number,
          });
      }
    }
  }
  const result: IndexRow[] = [];
  for (const rows of groups.values()) for (const row of rows.values()) result.push(row);
  return result;
}

function parseLabel(value: unknown, where: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new InvalidIndexError(`${where}.label is not a string`);
  const label = normalizeLabel(value);
  if (label.length === 0) return null;
  if (label.length > MAX_LABEL_LENGTH)
    throw new InvalidIndexError(`${where}.label is longer than ${MAX_LABEL_LENGTH} characters`);
  return label;
}
