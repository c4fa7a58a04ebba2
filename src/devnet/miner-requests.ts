import {
  DataEntityBucketId,
  MinerEndpoint,
  OnDemandMinerRequest,
  parseDataSource,
  sourceFromId,
  SourceId,
} from '../network/protocol';
import { parseIsoDate } from '../network/query-matcher';

/**
 * Checks of request bodies as a strict miner would make them: every documented field present
 * with its type (unknown extra fields are ignored). Being strict here catches gateway bugs in
 * tests instead of hiding them.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((entry) => typeof entry === 'string');
}

function isDateOrNull(value: unknown): value is string | null {
  return value === null || (typeof value === 'string' && parseIsoDate(value) !== undefined);
}

export function parseOnDemandRequest(body: unknown): Parsed<OnDemandMinerRequest> {
  if (!isRecord(body)) return fail('body must be a JSON object');
  const { source, usernames, keywords, start_date, end_date, limit } = body;
  const dataSource = typeof source === 'string' ? parseDataSource(source) : undefined;
  if (!dataSource) return fail('source must be "X" or "REDDIT"');
  if (!isStringArray(usernames)) return fail('usernames must be an array of strings');
  if (!isStringArray(keywords)) return fail('keywords must be an array of strings');
  if (!isDateOrNull(start_date)) return fail('start_date must be an ISO 8601 date or null');
  if (!isDateOrNull(end_date)) return fail('end_date must be an ISO 8601 date or null');
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    return fail('limit must be a positive integer');
  }
  return {
    ok: true,
    value: { source: dataSource, usernames, keywords, start_date, end_date, limit },
  };
}

export function parseMinerIndexRequest(body: unknown): Parsed<Record<string, never>> {
  return isRecord(body) ? { ok: true, value: {} } : fail('body must be a JSON object');
}

export function parseBucketRequest(body: unknown): Parsed<DataEntityBucketId> {
  if (!isRecord(body) || !isRecord(body.bucket_id)) return fail('bucket_id must be an object');
  const { time_bucket_id, source, label } = body.bucket_id;
  if (typeof time_bucket_id !== 'number' || !Number.isInteger(time_bucket_id)) {
    return fail('bucket_id.time_bucket_id must be an integer');
  }
  if (typeof source !== 'number' || sourceFromId(source) === undefined) {
    return fail('bucket_id.source must be 1 (REDDIT) or 2 (X)');
  }
  if (label !== null && typeof label !== 'string') {
    return fail('bucket_id.label must be a string or null');
  }
  return { ok: true, value: { time_bucket_id, source: source as SourceId, label } };
}

export type MinerRequest =
  | { endpoint: 'OnDemandRequest'; query: OnDemandMinerRequest }
  | { endpoint: 'GetMinerIndex' }
  | { endpoint: 'GetDataEntityBucket'; bucketId: DataEntityBucketId };

export function parseMinerRequest(endpoint: MinerEndpoint, body: unknown): Parsed<MinerRequest> {
  switch (endpoint) {
    case 'OnDemandRequest': {
      const parsed = parseOnDemandRequest(body);
      return parsed.ok ? { ok: true, value: { endpoint, query: parsed.value } } : parsed;
    }
    case 'GetMinerIndex': {
      const parsed = parseMinerIndexRequest(body);
      return parsed.ok ? { ok: true, value: { endpoint } } : parsed;
    }
    case 'GetDataEntityBucket': {
      const parsed = parseBucketRequest(body);
      return parsed.ok ? { ok: true, value: { endpoint, bucketId: parsed.value } } : parsed;
    }
  }
}
