import { pythonIsoDate, pythonJsonDumps } from '../common/python-json';
import { DataItem, RedditItem, XItem } from '../network/protocol';
import { sourceOfName, SourceId, toSourceId } from '../network/sources';
import { WireDataEntity } from '../network/sn13/entities';
import { xContentFields } from '../network/x-content';
import { toMinute } from './corpus-text';

/**
 * What a subnet 13 miner stores and serves, made from the devnet's corpus items: the stored
 * record (`XContent`, `RedditContent` by alias) serialized as the subnet's code does, wrapped in
 * a `DataEntity`. The gateway's sn13/entities.ts maps them back.
 */

/** The subnet's id of the item's source. */
export function sourceIdOf(item: DataItem): SourceId {
  return toSourceId(sourceOfName(item.source)!);
}

/** The stored record of `item` (a JSON string), as a miner keeps it. */
export function recordOf(item: DataItem): string {
  return item.source === 'X' ? xRecord(item) : redditRecord(item);
}

/** The item with `content_size_bytes` set to its record's byte length, as the gateway reads it. */
export function withRecordSize<T extends DataItem>(item: T): T {
  return { ...item, content_size_bytes: Buffer.byteLength(recordOf(item)) };
}

/** The entity a miner serves for `item`. */
export function toWireEntity(item: DataItem): WireDataEntity {
  const content = recordOf(item);
  return {
    uri: item.uri,
    datetime: pythonDatetime(item.datetime),
    source: sourceIdOf(item),
    label: item.label === null ? null : { value: item.label },
    content,
    content_size_bytes: Buffer.byteLength(content),
  };
}

/**
 * `XContent` (its fields in the model's order), serialized by pydantic v2 (compact JSON, `None`
 * fields left out). The record's timestamp is rounded down to the minute, as miners store it;
 * the entity keeps the second.
 */
function xRecord(item: XItem): string {
  const record = xContentFields(item, pythonDatetime(toMinute(item.datetime)));
  return JSON.stringify(record, (_, value: unknown) => (value === null ? undefined : value));
}

/**
 * `RedditContent` by alias, serialized by pydantic v1 (Python's `json.dumps`: `", "` and `": "`
 * separators, non-ASCII escaped, `None` as null), its time rounded down to the minute.
 */
function redditRecord(item: RedditItem): string {
  return pythonJsonDumps({
    id: item.id,
    url: item.uri,
    username: item.username,
    communityName: item.communityName,
    body: item.body,
    createdAt: pythonIsoDate(new Date(toMinute(item.createdAt))),
    dataType: item.dataType,
    title: item.title,
    parentId: item.parentId,
    media: item.media,
    is_nsfw: item.is_nsfw,
    score: item.score,
    upvote_ratio: item.upvote_ratio,
    num_comments: item.num_comments,
  });
}

/**
 * Python's ISO form of a UTC datetime as pydantic v2 writes it (`Z`): no fraction when it is
 * zero, microseconds otherwise. (`datetime.isoformat()`'s `+00:00` form is pythonIsoDate.)
 */
function pythonDatetime(iso: string): string {
  const [seconds, fraction] = iso.replace(/Z$/, '').split('.');
  return fraction && Number(fraction) !== 0
    ? `${seconds}.${fraction.padEnd(6, '0')}Z`
    : `${seconds}Z`;
}
