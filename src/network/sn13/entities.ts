import { isRecord } from '../../common/is-record';
import { MINUTE_MS } from '../../common/clock/durations';
import { toWholeSecond } from '../../common/http/http-date';
import { parseIsoDate } from '../../common/validation/iso-date';
import { DataItem, XItem } from '../protocol';
import { xPostTime } from '../x-post-id';
import { Source } from '../../common/source';
import { RecordPlace, redditItemOf, text, xItemOf } from './records';
import { toSourceId } from '../sources';
import { storableItem } from './well-formed';
import { MAX_RECORD_VALUES, parseMinerJson } from './miner-json';

/**
 * Subnet 13's `DataEntity` as miners send it, and its conversion to the gateway's item shapes.
 * The entity wraps the miner's stored record (`content`, the record's JSON as a string): an
 * `XContent` for X, a `RedditContent` (by alias) for Reddit, mapped by records.ts. Everything
 * here is untrusted input: a malformed entity or record converts to undefined, never throws.
 */

export interface WireDataLabel {
  value: string;
}

export interface WireDataEntity {
  uri: string;
  /**
   * ISO 8601; the miner keeps it to the second (the record's own time is rounded to the minute).
   */
  datetime: string;
  /** 1 = REDDIT, 2 = X. */
  source: number;
  label: WireDataLabel | null;
  /** The stored record's JSON. */
  content: string;
  /** Byte length of `content` (UTF-8), as honest miners report it. */
  content_size_bytes: number;
}

export interface ConvertedEntity {
  item: DataItem;
  /** What the miner declared, and the true byte length of the record it sent. */
  declaredBytes: number;
  contentBytes: number;
  /** What the record counts toward a claim (countedBytesOf): its bytes, unless padded. */
  countedBytes: number;
}

/** Records up to this size count toward a claim as they are. */
const PADDING_CHECKED_FROM = 4096;
/**
 * A larger record counts at most this many times the JSON of the item read from it: an honest
 * record is 0.6 to 0.9 times it (devnet X and Reddit), with room for fields a miner's release
 * keeps that the item does not.
 */
const PADDING_ALLOWANCE = 3;

/**
 * What a record of `contentBytes` counts toward its bucket's claim. The record is the miner's
 * text: unknown fields, whitespace and indentation pass the checks (the item is read without
 * them), so a liar padded real posts to 1 MB each and made 135 of them a 128 MiB bucket (a
 * hostile-miner audit's finding). Past PADDING_CHECKED_FROM, a record counts at most
 * PADDING_ALLOWANCE times the item's JSON: padding buys a liar little more than that.
 */
export function countedBytesOf(item: DataItem, contentBytes: number): number {
  if (contentBytes <= PADDING_CHECKED_FROM) return contentBytes;
  const read = PADDING_ALLOWANCE * Buffer.byteLength(JSON.stringify(item));
  return Math.min(contentBytes, Math.max(PADDING_CHECKED_FROM, read));
}

/** Reads one entity of `source`; undefined when it is malformed or its record is. */
export function convertEntity(value: unknown, source: Source): ConvertedEntity | undefined {
  if (!isRecord(value)) return undefined;
  const { uri, datetime, content, content_size_bytes: declared } = value;
  if (value.source !== toSourceId(source)) return undefined;
  if (typeof uri !== 'string' || uri === '' || typeof content !== 'string') return undefined;
  if (!Number.isSafeInteger(declared) || (declared as number) < 0) return undefined;
  const time = typeof datetime === 'string' ? parseIsoDate(datetime) : undefined;
  if (!time) return undefined;
  let record: unknown;
  try {
    record = parseMinerJson(content, MAX_RECORD_VALUES);
  } catch {
    return undefined;
  }
  if (!isRecord(record)) return undefined;
  // The entity's time is the record's own, which the record keeps rounded down to the minute
  // (XContent/RedditContent.to_data_entity): one in another minute re-dates the post, into a
  // query's range or a bucket's hour. A record must keep it, as a date (else the entity could
  // be dated at will by leaving it out), but for X's nested shape, which has no such field.
  const recorded = recordTime(record, source);
  if (recorded === undefined ? !isNestedX(record, source) : minuteOf(recorded) !== minuteOf(time))
    return undefined;
  const contentBytes = Buffer.byteLength(content);
  const place = { uri, datetime: time.toISOString(), contentBytes };
  const item = itemOf(record, source, place, [content, uri]);
  if (!item) return undefined;
  const countedBytes = countedBytesOf(item, contentBytes);
  return { item, declaredBytes: declared as number, contentBytes, countedBytes };
}

/**
 * Reads one content of a GetContentsByBuckets answer (a stored record's JSON, with no entity
 * around it): the uri is the record's `url`, the time its `timestamp` (X) or `createdAt`
 * (Reddit), which the record keeps rounded down to the minute; an X post's is its id's second
 * (toIdSecond). Undefined when the content is not a well-formed record of `source`.
 */
export function convertContent(content: unknown, source: Source): ConvertedEntity | undefined {
  if (typeof content !== 'string') return undefined;
  let record: unknown;
  try {
    record = parseMinerJson(content, MAX_RECORD_VALUES);
  } catch {
    return undefined;
  }
  if (!isRecord(record)) return undefined;
  const uri = text(record.url);
  const time = recordTime(record, source);
  if (!uri || !time) return undefined;
  const contentBytes = Buffer.byteLength(content);
  const place = { uri, datetime: time.toISOString(), contentBytes };
  const item = itemOf(record, source, place, [content]);
  if (!item) return undefined;
  const countedBytes = countedBytesOf(item, contentBytes);
  return { item: toIdSecond(item), declaredBytes: contentBytes, contentBytes, countedBytes };
}

/**
 * An X item dated to the second its id holds, as X's `created_at` (a live answer's entity, the
 * hosted API) is. A bare record has only its minute: dated to it, a post of 05:32:20 was missed
 * by a query from 05:32:20 and answered one until 05:32:10 (an audit's finding). itemOf has
 * already held the minute to the id's, so this moves the time within that minute only. Reddit
 * items, and X ids that hold no time, keep the record's minute.
 */
function toIdSecond(item: DataItem): DataItem {
  const posted = item.source === 'X' ? xPostTime(item.tweet.id) : undefined;
  if (!posted) return item;
  return { ...item, datetime: toWholeSecond(posted).toISOString() };
}

/** The record's own time: `timestamp` (X) or `createdAt` (Reddit); undefined if it has none. */
function recordTime(record: Record<string, unknown>, source: Source): Date | undefined {
  const stamp = text(source === 'x' ? record.timestamp : record.createdAt);
  return stamp === undefined ? undefined : parseIsoDate(stamp);
}

/**
 * X's nested record shape (`user: {…}`, `tweet: {…}`, records.ts), which keeps no time of its
 * own: no `timestamp` at all and no flat `username`.
 */
function isNestedX(record: Record<string, unknown>, source: Source): boolean {
  return (
    source === 'x' &&
    record.timestamp === undefined &&
    record.username === undefined &&
    isRecord(record.user)
  );
}

function minuteOf(time: Date): number {
  return Math.floor(time.getTime() / MINUTE_MS);
}

/**
 * The one place every item from a miner is made (live answers, stored buckets, a task's
 * collection), and made storable from the texts it was read from (well-formed.ts).
 */
function itemOf(
  record: Record<string, unknown>,
  source: Source,
  place: RecordPlace,
  texts: readonly string[],
): DataItem | undefined {
  const item = source === 'x' ? xItemOf(record, place) : redditItemOf(record, place);
  if (item?.source === 'X' && !postedWhenItsIdSays(item)) return undefined;
  return item && storableItem(item, texts);
}

/**
 * An X post's id holds the moment it was posted (x-post-id.ts); the times a miner sends, the
 * entity's and the record's, are its own word, and convertEntity only holds them to each
 * other. So an item must fall in its id's minute, the tolerance the subnet itself allows:
 * `XContent.to_data_entity` keeps the entity's datetime exact (X's `created_at`, the id's time
 * to the second) and the record's timestamp rounded down to the minute, and upstream's
 * validator compares that timestamp with the scraped post's, to the minute. A re-dated real
 * post is dropped (an audit's finding: dated into a query's range or a newer bucket's hour, it
 * was kept, hid the honest row and counted as agreeing with honest copies). An id that holds no
 * time (before November 2010) is left unchecked.
 */
function postedWhenItsIdSays(item: XItem): boolean {
  const posted = xPostTime(item.tweet.id);
  return posted === undefined || minuteOf(posted) === minuteOf(new Date(item.datetime));
}
