import { IndexRow } from './compressed-index';

/**
 * A miner's totals: bytes per (source, label id) or per (source, hour), keyed by `totalsKey`.
 * Small-integer keys: building these maps is on the ingest path, and string keys (or numbers
 * beyond 2^30, which V8 boxes) cost several times more.
 */
export type Totals = Map<number, number>;

/** Label id of unlabeled rows in keys (label ids start at 1). */
export const NO_LABEL = 0;

/** `id * 2 + (source − 1)`: source is 1 (Reddit) or 2 (X). */
export function totalsKey(source: number, id: number): number {
  return id * 2 + source - 1;
}

export interface PreparedIndex {
  /**
   * Indexes into the rows in the order of the partition's lookup index (source, label id, hour,
   * unlabeled last): loaded in this order, building that index after COPY needs no real sort.
   */
  order: Uint32Array;
  /** Per (source, label id), unlabeled rows excluded (they count in hours only). */
  labels: Totals;
  /** Per (source, hour). */
  buckets: Totals;
  /**
   * Per (source, hour), the hour's largest bucket: its label id (NO_LABEL for unlabeled data)
   * and bytes. query_bucket without a label fetches it, and reads it from the miner's totals
   * (an index lookup by hour would read every row of the miner's partition).
   */
  largest: Map<number, { labelId: number; bytes: number }>;
}

/**
 * Orders a miner's rows for loading and sums its totals. The parser emits the rows of each
 * (source, label) together, so the label map is consulted once per run of rows, not per row.
 */
export function prepareIndex(
  rows: readonly IndexRow[],
  labelIds: ReadonlyMap<string, number>,
): PreparedIndex {
  /** (source, label id) key → the [start, end) ranges of its runs of rows. */
  const runs = new Map<number, number[]>();
  const buckets: Totals = new Map();
  /** (source, hour) key → index of its largest row (the first listed, among equals). */
  const largestRow = new Map<number, number>();
  for (let start = 0; start < rows.length;) {
    const { source, label } = rows[start];
    let end = start;
    for (; end < rows.length && rows[end].source === source && rows[end].label === label; end++) {
      const row = rows[end];
      const key = totalsKey(source, row.timeBucket);
      buckets.set(key, (buckets.get(key) ?? 0) + row.bytes);
      const largest = largestRow.get(key);
      if (largest === undefined || row.bytes > rows[largest].bytes) largestRow.set(key, end);
    }
    const key = totalsKey(source, label === null ? NO_LABEL : labelIdOf(labelIds, label));
    const ranges = runs.get(key);
    if (ranges) ranges.push(start, end);
    else runs.set(key, [start, end]);
    start = end;
  }

  const order = new Uint32Array(rows.length);
  const labels: Totals = new Map();
  let next = 0;
  for (const key of [...runs.keys()].sort(byLookupOrder)) {
    const first = next;
    next = appendInHourOrder(rows, runs.get(key)!, order, next);
    if (idOf(key) === NO_LABEL) continue;
    let bytes = 0;
    for (let i = first; i < next; i++) bytes += rows[order[i]].bytes;
    labels.set(key, bytes);
  }
  const largest = new Map<number, { labelId: number; bytes: number }>();
  for (const [key, index] of largestRow) {
    const { label, bytes } = rows[index];
    largest.set(key, { labelId: label === null ? NO_LABEL : labelIdOf(labelIds, label), bytes });
  }
  return { order, labels, buckets, largest };
}

/**
 * Writes the row indexes of one (source, label) into `order` from `next` on, in hour order;
 * returns the next free position. Usually a single run that the miner sent in ascending or
 * descending order, copied as it is: a comparator sort per label would cost more than all the
 * rest of the preparation.
 */
function appendInHourOrder(
  rows: readonly IndexRow[],
  ranges: readonly number[],
  order: Uint32Array,
  next: number,
): number {
  const [start, end] = ranges;
  if (ranges.length === 2) {
    let ascending = true;
    let descending = true;
    for (let i = start + 1; i < end; i++) {
      const step = rows[i].timeBucket - rows[i - 1].timeBucket;
      if (step < 0) ascending = false;
      if (step > 0) descending = false;
    }
    if (ascending) for (let index = start; index < end; index++) order[next++] = index;
    else if (descending) for (let index = end - 1; index >= start; index--) order[next++] = index;
    if (ascending || descending) return next;
  }
  const group: number[] = [];
  for (let i = 0; i < ranges.length; i += 2) {
    for (let index = ranges[i]; index < ranges[i + 1]; index++) group.push(index);
  }
  group.sort((a, b) => rows[a].timeBucket - rows[b].timeBucket);
  for (const index of group) order[next++] = index;
  return next;
}

/** Source first, then label id with the unlabeled (id 0) last, as NULLs sort in the index. */
function byLookupOrder(a: number, b: number): number {
  const rank = (key: number) => (idOf(key) === NO_LABEL ? Number.MAX_SAFE_INTEGER : idOf(key));
  return sourceOf(a) - sourceOf(b) || rank(a) - rank(b);
}

const sourceOf = (key: number): number => (key % 2) + 1;
const idOf = (key: number): number => Math.floor(key / 2);

/** `fresh − old`, without the keys whose bytes did not change. */
export function totalsDifference(fresh: Totals, old: Totals): Totals {
  const result = new Map(fresh);
  for (const [key, bytes] of old) result.set(key, (result.get(key) ?? 0) - bytes);
  for (const [key, bytes] of result) if (bytes === 0) result.delete(key);
  return result;
}

/** Totals as the parallel arrays SQL takes (`unnest($1::smallint[], $2::int[], $3::bigint[])`). */
export function totalsColumns(totals: Totals): {
  sources: number[];
  ids: number[];
  bytes: number[];
} {
  const sources: number[] = [];
  const ids: number[] = [];
  const bytes: number[] = [];
  for (const [key, value] of totals) {
    sources.push(sourceOf(key));
    ids.push(idOf(key));
    bytes.push(value);
  }
  return { sources, ids, bytes };
}

export function totalsFromColumns(
  sources: readonly number[],
  ids: readonly number[],
  bytes: readonly (number | string)[],
): Totals {
  const totals: Totals = new Map();
  for (let i = 0; i < sources.length; i++) {
    const key = totalsKey(sources[i], ids[i]);
    totals.set(key, (totals.get(key) ?? 0) + Number(bytes[i]));
  }
  return totals;
}

export function labelIdOf(labelIds: ReadonlyMap<string, number>, label: string): number {
  const id = labelIds.get(label);
  if (id === undefined) throw new Error(`label without an id: ${label}`);
  return id;
}
