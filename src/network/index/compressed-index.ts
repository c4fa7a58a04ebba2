import { isRecord } from '../../common/is-record';
import {
  MAX_BUCKET_BYTES,
  MAX_INDEX_BUCKETS,
  MAX_LABEL_LENGTH,
  normalizeLabel,
  oldestUsefulBucket,
  timeBucketId,
} from '../protocol';
import { SourceId } from '../sources';
import { isStorableText } from '../../common/validation/storable-text';
import { characterCount } from '../../common/characters';
import { shownExcerpt } from '../../common/validation/control-characters';

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
 * the miner's previous index then stays. Sources the gateway does not serve (YouTube, the
 * subnet's reserved ids) are left out, but their buckets count toward the cap, as the subnet's
 * validator counts them: an index cannot hide its size there. Buckets older than the retention
 * are worth nothing and are skipped, and so are buckets later than the next hour (a miner's
 * clock or a source's timestamp ahead of ours; the subnet's validator does not check this, so
 * one such bucket must not cost the whole index). Labels are normalized, and a bucket listed
 * again (an hour repeated, or under a label that collides after normalization) keeps its first
 * size. An entry whose label
 * Postgres cannot store (U+0000, an unpaired surrogate) is left out, its buckets still counted
 * toward the cap: stored, the label made every replace of the miner's index fail. An index of
 * more entries than MAX_INDEX_BUCKETS is rejected too: empty entries claim no bucket, but each
 * costs memory to parse.
 *
 * A bucket claimed larger than MAX_BUCKET_BYTES, in any source and at any hour, rejects the
 * whole index: the subnet's validator stores such an index but cannot read it back
 * (ScorableDataEntityBucket refuses the size), so the miner fails its evaluations until it sends
 * one within the cap. Honest miners report a larger bucket at the cap.
 */
export function parseCompressedIndex(value: unknown, now: Date): IndexRow[] {
  if (!isRecord(value) || !isRecord(value.sources))
    throw new InvalidIndexError('expected an object with `sources`');
  const hours = {
    oldest: oldestUsefulBucket(now),
    newest: timeBucketId(now) + 1,
  };
  // Rows by (source, label), then by hour: one string key per entry rather than per bucket
  // (this runs over up to 350 k buckets per miner on the ingest path).
  const groups = new Map<string, Map<number, IndexRow>>();
  let claimed = 0;
  let entryCount = 0;

  for (const [sourceKey, entries] of Object.entries(value.sources)) {
    // The subnet parses the keys as integers: anything else is malformed, not a new source.
    // The key is the miner's text, quoted in a logged warning: escaped and cut, as an axon's
    // error message is (a review found it forged log lines).
    const shownKey = shownExcerpt(sourceKey, 20);
    if (!/^\d+$/.test(sourceKey))
      throw new InvalidIndexError(`source id ${shownKey} is not a number`);
    if (!Array.isArray(entries)) throw new InvalidIndexError(`sources.${shownKey} is not a list`);
    const source = sourceKey === '1' || sourceKey === '2' ? (Number(sourceKey) as SourceId) : null;
    for (const [index, entry] of entries.entries()) {
      const where = `sources.${shownKey}[${index}]`;
      // An honest entry holds at least one bucket, so there are never more entries than buckets.
      if (++entryCount > MAX_INDEX_BUCKETS)
        throw new InvalidIndexError(`more than ${MAX_INDEX_BUCKETS} entries`);
      if (!isRecord(entry)) throw new InvalidIndexError(`${where} is not an object`);
      if (!Array.isArray(entry.time_bucket_ids))
        throw new InvalidIndexError(`${where}.time_bucket_ids is not a list`);
      claimed += entry.time_bucket_ids.length;
      if (claimed > MAX_INDEX_BUCKETS)
        throw new InvalidIndexError(`more than ${MAX_INDEX_BUCKETS} buckets`);
      rejectOverCap(entry.sizes_bytes, where);
      if (source !== null) addEntry(groups, source, entry, where, hours);
    }
  }
  const result: IndexRow[] = [];
  for (const rows of groups.values()) for (const row of rows.values()) result.push(row);
  return result;
}

/** One entry of a served source, its buckets checked and added to its (source, label) group. */
function addEntry(
  groups: Map<string, Map<number, IndexRow>>,
  source: SourceId,
  entry: Record<string, unknown>,
  where: string,
  hours: { oldest: number; newest: number },
): void {
  const label = parseLabel(entry.label, where);
  const { time_bucket_ids: buckets, sizes_bytes: sizes } = entry;
  if (!Array.isArray(buckets) || !Array.isArray(sizes) || buckets.length !== sizes.length) {
    throw new InvalidIndexError(
      `${where}: time_bucket_ids and sizes_bytes must be lists of equal length`,
    );
  }
  // An entry Postgres cannot store is checked as every other is, and then left out.
  const keep = label !== UNSTORABLE;
  // Its group is made at its first kept bucket: an index of a million empty entries (within the
  // answer cap, outside the bucket cap) would otherwise hold a million empty maps.
  let rows: Map<number, IndexRow> | undefined;
  for (let i = 0; i < buckets.length; i++) {
    const bucket: unknown = buckets[i];
    const bytes: unknown = sizes[i];
    if (!Number.isSafeInteger(bucket) || !Number.isSafeInteger(bytes) || (bytes as number) < 0) {
      throw new InvalidIndexError(
        `${where}: bucket ${i} is not a whole hour with a non-negative size`,
      );
    }
    const hour = bucket as number;
    if (!keep || hour < hours.oldest || hour > hours.newest || bytes === 0) continue;
    if (!rows) {
      const groupKey = `${source}|${label ?? ''}`;
      rows = groups.get(groupKey);
      if (!rows) groups.set(groupKey, (rows = new Map<number, IndexRow>()));
    }
    // A bucket listed again (the same label, or one that reads the same normalized) keeps its
    // first size, as the subnet's validator stores an index (INSERT OR IGNORE on miner, source,
    // case-folded label and hour): summed, a miner multiplied its claims by repeating an hour
    // (a fidelity audit).
    if (rows.has(hour)) continue;
    rows.set(hour, { source, label, timeBucket: hour, bytes: bytes as number });
  }
}

/** Checked for every source, served or not: the subnet's validator reads them all back. */
function rejectOverCap(sizes: unknown, where: string): void {
  if (!Array.isArray(sizes)) return;
  const index = sizes.findIndex((bytes) => typeof bytes === 'number' && bytes > MAX_BUCKET_BYTES);
  if (index >= 0)
    throw new InvalidIndexError(
      `${where}: bucket ${index} claims ${String(sizes[index])} bytes, over the subnet's ${MAX_BUCKET_BYTES}-byte bucket cap`,
    );
}

/** A label Postgres cannot store: see parseLabel. */
const UNSTORABLE = Symbol('unstorable label');

/**
 * The entry's label, normalized; null for none. UNSTORABLE for a label holding U+0000 or an
 * unpaired surrogate, which JSON carries and Postgres refuses (well-formed.ts). Not cleaned as
 * item text is: the cleaned label would name a bucket the miner does not hold under that name
 * (or merge into a real label's claim), so what the gateway asked for it, or a spot check
 * picked from it, would be answered wrong through no fault of the miner's.
 */
function parseLabel(value: unknown, where: string): string | null | typeof UNSTORABLE {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new InvalidIndexError(`${where}.label is not a string`);
  const label = normalizeLabel(value);
  if (characterCount(label) > MAX_LABEL_LENGTH)
    throw new InvalidIndexError(`${where}.label is longer than ${MAX_LABEL_LENGTH} characters`);
  if (!isStorableText(value)) return UNSTORABLE;
  return label.length === 0 ? null : label;
}
