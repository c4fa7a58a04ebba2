import { isRecord } from '../common/is-record';
import { BucketKey, KeywordMode, normalizeLabel } from '../network/protocol';
import { sourceOfId, SourceId, SourceName, toSourceName } from '../network/sources';
import { pythonFromIsoFormat } from '../common/python-json';
import { SynapseName } from '../common/synapse-names';
import { MAX_CONTENT_BUCKETS } from '../network/sn13/messages';

/**
 * Reads a synapse's inputs from the request body, as the subnet's pydantic models would: a field
 * with the wrong type or outside its bounds is refused (the axon answers 500: its dependency
 * `verify_body_integrity` builds the synapse, and the model's error reaches its middleware).
 * Unknown fields are ignored. Being strict here catches gateway bugs in tests instead of hiding
 * them.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

export interface OnDemandInputs {
  /** As the items this miner holds spell it. */
  source: SourceName;
  usernames: string[];
  keywords: string[];
  keyword_mode: KeywordMode;
  url: string | null;
  /** The bounds as the miner reads them (Python 3.10's `datetime.fromisoformat`). */
  start_date: Date | null;
  end_date: Date | null;
  limit: number;
}

export type MinerRequest =
  /** `query` null: a date the miner cannot read, so it answers no data. */
  | { synapse: 'OnDemandRequest'; query: OnDemandInputs | null }
  /** `version`: the protocol version asked for (absent: the miner fails, as a real one does). */
  | { synapse: 'GetMinerIndex'; version: number | null }
  | { synapse: 'GetDataEntityBucket'; bucket: BucketKey }
  /** `buckets`: empty when more than 100 were asked (a real miner then answers nothing). */
  | { synapse: 'GetContentsByBuckets'; buckets: BucketKey[] };

export function parseMinerRequest(
  synapse: SynapseName,
  body: Record<string, unknown>,
): Parsed<MinerRequest> {
  switch (synapse) {
    case 'OnDemandRequest': {
      const parsed = parseOnDemand(body);
      return parsed.ok ? { ok: true, value: { synapse, query: parsed.value } } : parsed;
    }
    case 'GetMinerIndex': {
      const { version } = body;
      if (version !== undefined && version !== null && !Number.isInteger(version))
        return fail('version must be an integer');
      return { ok: true, value: { synapse, version: (version as number | undefined) ?? null } };
    }
    case 'GetDataEntityBucket': {
      const parsed = parseBucketId(body.data_entity_bucket_id);
      return parsed.ok ? { ok: true, value: { synapse, bucket: parsed.value } } : parsed;
    }
    case 'GetContentsByBuckets': {
      const ids = body.data_entity_bucket_ids;
      if (!Array.isArray(ids)) return fail('data_entity_bucket_ids must be a list');
      const buckets: BucketKey[] = [];
      for (const id of ids) {
        const parsed = parseBucketId(id);
        if (!parsed.ok) return parsed;
        buckets.push(parsed.value);
      }
      const value = { synapse, buckets: buckets.length > MAX_CONTENT_BUCKETS ? [] : buckets };
      return { ok: true, value };
    }
  }
}

/** The query, or null when a date is one the miner cannot read. */
function parseOnDemand(body: Record<string, unknown>): Parsed<OnDemandInputs | null> {
  const { source, usernames = [], keywords = [], keyword_mode = 'all', url = null } = body;
  const { start_date = null, end_date = null, limit = 100 } = body;
  const asked = typeof source === 'number' ? sourceOfId(source) : undefined;
  if (!asked) return fail('source must be 1 (REDDIT) or 2 (X)');
  if (!isStringList(usernames, 10)) return fail('usernames must be at most 10 strings');
  if (!isStringList(keywords, 5)) return fail('keywords must be at most 5 strings');
  if (keyword_mode !== 'all' && keyword_mode !== 'any')
    return fail('keyword_mode must be "all" or "any"');
  if (url !== null && typeof url !== 'string') return fail('url must be a string or null');
  if (!isStringOrNull(start_date)) return fail('start_date must be a string or null');
  if (!isStringOrNull(end_date)) return fail('end_date must be a string or null');
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000)
    return fail('limit must be an integer from 1 to 1000');
  // The model takes any string; handle_on_demand reads it with Python 3.10's
  // `datetime.fromisoformat` and answers no data where that raises (a `Z` among others).
  const [start, end] = [start_date, end_date].map((date) =>
    date === null ? null : pythonFromIsoFormat(date),
  );
  if (start === undefined || end === undefined) return { ok: true, value: null };
  return {
    ok: true,
    value: {
      source: toSourceName(asked),
      usernames,
      keywords,
      keyword_mode,
      url,
      start_date: start,
      end_date: end,
      limit: limit as number,
    },
  };
}

/** `{time_bucket: {id}, source, label: {value} | null}`. */
function parseBucketId(value: unknown): Parsed<BucketKey> {
  if (!isRecord(value)) return fail('data_entity_bucket_id must be an object');
  const { time_bucket: timeBucket, source, label } = value;
  if (!isRecord(timeBucket) || !Number.isInteger(timeBucket.id) || (timeBucket.id as number) < 1)
    return fail('data_entity_bucket_id.time_bucket.id must be a positive integer');
  if (typeof source !== 'number' || sourceOfId(source) === undefined)
    return fail('data_entity_bucket_id.source must be 1 (REDDIT) or 2 (X)');
  if (
    label !== null &&
    label !== undefined &&
    !(isRecord(label) && typeof label.value === 'string')
  )
    return fail('data_entity_bucket_id.label must be {"value": string} or null');
  return {
    ok: true,
    value: {
      timeBucket: timeBucket.id as number,
      source: source as SourceId,
      label: isRecord(label) ? normalizeLabel(label.value as string) : null,
    },
  };
}

function isStringList(value: unknown, max: number): value is string[] {
  return (
    Array.isArray(value) && value.length <= max && value.every((entry) => typeof entry === 'string')
  );
}

function isStringOrNull(value: unknown): value is string | null {
  return value === null || typeof value === 'string';
}
