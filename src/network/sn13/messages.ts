import { pythonIsoDate } from '../../common/python-json';
import { parseKeyword } from '../keywords';
import { authorName, BucketKey, KeywordMode, NetworkQuery } from '../protocol';
import { toSourceId } from '../sources';
import { WireDataLabel } from './entities';
import { MAX_INDEX_VALUES, parseMinerJson, UnreadableJsonError } from './miner-json';

/**
 * The fields of subnet 13's synapses as named on the wire (data-universe `common/protocol.py`),
 * and readers of their answers. Every synapse carries `version`; miners answer an index request
 * without version 4 with an error.
 */

export const PROTOCOL_VERSION = 4;

export interface WireBucketId {
  time_bucket: { id: number };
  /** 1 = REDDIT, 2 = X. */
  source: number;
  label: WireDataLabel | null;
}

export function wireBucketId(bucket: BucketKey): WireBucketId {
  return {
    time_bucket: { id: bucket.timeBucket },
    source: bucket.source,
    label: bucket.label === null ? null : { value: bucket.label },
  };
}

export function getMinerIndexFields(): { version: number } {
  return { version: PROTOCOL_VERSION };
}

export function getDataEntityBucketFields(bucket: BucketKey): {
  version: number;
  data_entity_bucket_id: WireBucketId;
} {
  return { version: PROTOCOL_VERSION, data_entity_bucket_id: wireBucketId(bucket) };
}

/** A miner answers more bucket ids than this with nothing. */
export const MAX_CONTENT_BUCKETS = 100;

export function getContentsByBucketsFields(buckets: readonly BucketKey[]): {
  version: number;
  data_entity_bucket_ids: WireBucketId[];
} {
  if (buckets.length > MAX_CONTENT_BUCKETS)
    throw new RangeError(`at most ${MAX_CONTENT_BUCKETS} buckets per GetContentsByBuckets call`);
  return { version: PROTOCOL_VERSION, data_entity_bucket_ids: buckets.map(wireBucketId) };
}

/**
 * One pair of a GetContentsByBuckets answer: the bucket id as the miner echoed it, and its
 * contents.
 */
export interface BucketContents {
  /** Untrusted: the caller matches it against the buckets it asked for. */
  bucketId: unknown;
  /** Untrusted: each should be a stored record's JSON as a string. */
  contents: unknown[];
}

/** `bucket_ids_to_contents`: a list of `[bucket id, [content, …]]` pairs. */
export function readBucketContents(body: unknown): BucketContents[] {
  const pairs = field(body, 'bucket_ids_to_contents');
  if (!Array.isArray(pairs)) throw new WrongAnswerError('bucket_ids_to_contents is not a list');
  return pairs.map((pair) => {
    if (!Array.isArray(pair) || pair.length !== 2 || !Array.isArray(pair[1]))
      throw new WrongAnswerError(
        'bucket_ids_to_contents holds a pair that is not [id, [contents]]',
      );
    return { bucketId: pair[0] as unknown, contents: pair[1] as unknown[] };
  });
}

export interface OnDemandRequestFields {
  version: number;
  source: number;
  usernames: string[];
  keywords: string[];
  keyword_mode: KeywordMode;
  url: string | null;
  start_date: string | null;
  end_date: string | null;
  limit: number;
}

/**
 * Our query as an `OnDemandRequest`, `keyword_mode` as the client asked (`all`: every keyword,
 * `any`: at least one; usernames AND keywords either way, as miners filter). Miners read a Reddit
 * query's first keyword as the subreddit, so subreddit selectors (`r/x`, `/r/x`, `/x`) are sent
 * first, as `r/x`. Whatever a miner returns is checked against our own rules anyway.
 *
 * Usernames go as authorName (trimmed, without `@`) and keywords trimmed, blank ones left out,
 * as the matcher reads them: a miner matches the record's author exactly, so `"@elonmusk "`
 * asked it for an author no record has, and the answer was empty.
 */
export function onDemandRequestFields(query: NetworkQuery): OnDemandRequestFields {
  const keywords = query.keywords
    .map((keyword) => keyword.trim())
    .filter((keyword) => keyword !== '')
    .map((keyword) => {
      const parsed = parseKeyword(keyword, query.source);
      return parsed.kind === 'subreddit'
        ? { wire: parsed.label, first: true }
        : { wire: keyword, first: false };
    });
  return {
    version: PROTOCOL_VERSION,
    source: toSourceId(query.source),
    usernames: query.usernames.map(authorName).filter((name) => name !== ''),
    keywords: [
      ...keywords.filter((keyword) => keyword.first),
      ...keywords.filter((keyword) => !keyword.first),
    ].map((keyword) => keyword.wire),
    keyword_mode: query.keywordMode,
    url: null,
    start_date: query.startDate ? pythonIsoDate(query.startDate) : null,
    end_date: pythonIsoDate(query.endDate),
    limit: query.limit,
  };
}

export class WrongAnswerError extends Error {
  override readonly name = 'WrongAnswerError';
}

/**
 * `compressed_index_serialized`: the index's JSON as a string, parsed here (refused past
 * MAX_INDEX_VALUES values, miner-json.ts).
 */
export function readCompressedIndex(body: unknown): unknown {
  const serialized = field(body, 'compressed_index_serialized');
  if (typeof serialized !== 'string')
    throw new WrongAnswerError('compressed_index_serialized is not a string');
  try {
    return parseMinerJson(serialized, MAX_INDEX_VALUES);
  } catch (error) {
    if (!(error instanceof UnreadableJsonError)) throw error;
    throw new WrongAnswerError(`compressed_index_serialized ${error.message}`);
  }
}

/** The list of entities an answer carries in `name` (`data_entities`, `data`). */
export function readEntityList(body: unknown, name: 'data_entities' | 'data'): unknown[] {
  const list = field(body, name);
  if (!Array.isArray(list)) throw new WrongAnswerError(`${name} is not a list`);
  return list;
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)[name]
    : undefined;
}
