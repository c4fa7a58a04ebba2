import { isRecord } from '../../common/is-record';
import { parseIsoDate } from '../../common/validation/iso-date';
import { DataItem, MAX_LABEL_LENGTH, RedditItem, XItem, XMedia } from '../protocol';
import { Source } from '../../common/source';
import { toSourceId } from './sources';

/**
 * Subnet 13's `DataEntity` as miners send it, and its conversion to the gateway's item shapes.
 * The entity wraps the miner's stored record (`content`, the record's JSON as a string): an
 * `XContent` for X, a `RedditContent` (by alias) for Reddit. Everything here is untrusted input:
 * a malformed entity or record converts to undefined, never throws. The mapping is documented
 * in docs/miner-protocol.md ("From stored records to items").
 */

export interface WireDataLabel {
  value: string;
}

export interface WireDataEntity {
  uri: string;
  /** ISO 8601; the miner keeps it to the second (the record's own time is rounded to the minute). */
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
    record = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (!isRecord(record)) return undefined;
  const item =
    source === 'x'
      ? xItemOf(record, uri, time.toISOString())
      : redditItemOf(record, uri, time.toISOString());
  if (!item) return undefined;
  return {
    item,
    declaredBytes: declared as number,
    contentBytes: Buffer.byteLength(content),
  };
}

/**
 * Reads one content of a GetContentsByBuckets answer (a stored record's JSON, with no entity
 * around it): the uri is the record's `url`, the time its `timestamp` (X) or `createdAt`
 * (Reddit). Undefined when the content is not a well-formed record of `source`.
 */
export function convertContent(content: unknown, source: Source): ConvertedEntity | undefined {
  if (typeof content !== 'string') return undefined;
  let record: unknown;
  try {
    record = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (!isRecord(record)) return undefined;
  const uri = text(record.url);
  const stamp = text(source === 'x' ? record.timestamp : record.createdAt);
  const time = stamp === undefined ? undefined : parseIsoDate(stamp);
  if (!uri || !time) return undefined;
  const datetime = time.toISOString();
  const item =
    source === 'x' ? xItemOf(record, uri, datetime) : redditItemOf(record, uri, datetime);
  if (!item) return undefined;
  const contentBytes = Buffer.byteLength(content);
  return { item, declaredBytes: contentBytes, contentBytes };
}

/**
 * An `XContent` record (flat: `username`, `text`, `url`, `tweet_hashtags`, `user_*`, `tweet_id`,
 * counters, `media` as URLs). Some miners store the nested shape of the subnet's API instead
 * (`user: {…}`, `tweet: {…}`, `content`); its fields are read where the flat ones are missing.
 */
function xItemOf(
  record: Record<string, unknown>,
  uri: string,
  datetime: string,
): XItem | undefined {
  const user = isRecord(record.user) ? record.user : {};
  const tweet = isRecord(record.tweet) ? record.tweet : {};
  const username = text(record.username) ?? text(user.username);
  const body = text(record.text) ?? text(record.content);
  const url = text(record.url) ?? text(record.uri);
  const hashtags = record.tweet_hashtags ?? tweet.hashtags ?? [];
  if (!username || body === undefined || url !== uri) return undefined;
  if (!Array.isArray(hashtags) || !hashtags.every((tag) => typeof tag === 'string'))
    return undefined;
  const media = mediaOf(record.media);
  if (!media) return undefined;
  const tweetId = text(record.tweet_id) ?? text(tweet.id) ?? /\/status\/(\d+)/.exec(uri)?.[1];
  if (!tweetId) return undefined;
  return {
    uri,
    datetime,
    source: 'X',
    label: hashtags.length > 0 ? labelOf(hashtags[0]) : null,
    content: body,
    user: {
      username,
      display_name: text(record.user_display_name) ?? text(user.display_name) ?? null,
      id: text(record.user_id) ?? text(user.id) ?? null,
      verified: flag(record.user_verified) ?? flag(user.verified) ?? null,
      followers_count: count(record.user_followers_count) ?? count(user.followers_count) ?? null,
      following_count: count(record.user_following_count) ?? count(user.following_count) ?? null,
    },
    tweet: {
      id: tweetId,
      like_count: count(record.like_count) ?? count(tweet.like_count) ?? null,
      retweet_count: count(record.retweet_count) ?? count(tweet.retweet_count) ?? null,
      reply_count: count(record.reply_count) ?? count(tweet.reply_count) ?? null,
      quote_count: count(record.quote_count) ?? count(tweet.quote_count) ?? null,
      hashtags: hashtags,
      is_retweet: flag(record.is_retweet) ?? flag(tweet.is_retweet) ?? null,
      is_reply: flag(record.is_reply) ?? flag(tweet.is_reply) ?? null,
      is_quote: flag(record.is_quote) ?? flag(tweet.is_quote) ?? null,
      conversation_id: text(record.conversation_id) ?? text(tweet.conversation_id) ?? null,
    },
    media,
  };
}

/** A `RedditContent` record by alias (`communityName`, `createdAt`, `dataType`, `parentId`). */
function redditItemOf(
  record: Record<string, unknown>,
  uri: string,
  datetime: string,
): RedditItem | undefined {
  const { id, url, username, communityName, body, dataType, title, parentId } = record;
  if (!text(id) || url !== uri || !text(username) || typeof body !== 'string') return undefined;
  if (typeof communityName !== 'string' || !/^r\/./i.test(communityName)) return undefined;
  if (dataType !== 'post' && dataType !== 'comment') return undefined;
  if (title !== undefined && title !== null && typeof title !== 'string') return undefined;
  if (parentId !== undefined && parentId !== null && typeof parentId !== 'string') return undefined;
  const heading = typeof title === 'string' && title !== '' ? title : undefined;
  const item: RedditItem = {
    uri,
    datetime,
    source: 'REDDIT',
    label: labelOf(communityName),
    content: heading === undefined ? body : body === '' ? heading : `${heading}\n\n${body}`,
    id: id as string,
    url: uri,
    username: username as string,
    communityName,
    body,
    title: heading ?? null,
    createdAt: datetime,
    dataType,
    parentId: typeof parentId === 'string' ? parentId : null,
  };
  return item;
}

/**
 * Records list media as URLs (the nested shape as `{url, type}`). The type of a bare URL is read
 * from X's media hosts: `video.twimg.com/tweet_video/` is an animated GIF, other
 * `video.twimg.com` URLs are videos, anything else a photo.
 */
function mediaOf(value: unknown): XMedia[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  const media: XMedia[] = [];
  for (const entry of value) {
    const url = typeof entry === 'string' ? entry : isRecord(entry) ? text(entry.url) : undefined;
    if (!url) return undefined;
    media.push({ url, type: mediaType(url) });
  }
  return media;
}

function mediaType(url: string): XMedia['type'] {
  if (url.includes('video.twimg.com/tweet_video/')) return 'animated_gif';
  return url.includes('video.twimg.com/') ? 'video' : 'photo';
}

/** Labels are lower-cased and cut to 140 characters, as miners file them. */
function labelOf(value: string): string {
  return value.trim().toLowerCase().slice(0, MAX_LABEL_LENGTH);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function count(value: unknown): number | undefined {
  return Number.isSafeInteger(value) ? (value as number) : undefined;
}

function flag(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}
