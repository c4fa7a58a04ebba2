import { isRecord } from '../../common/is-record';
import { parseIsoDate } from '../../common/validation/iso-date';
import { cutLabel, RedditItem, XItem, xHandle } from '../protocol';

/**
 * A miner's stored record (`XContent`, `RedditContent` by alias) as the item of the subnet's
 * hosted on-demand API. The record is untrusted: a missing or mistyped required field refuses it
 * (undefined); an optional field that is missing or mistyped is null, never made up. The mapping
 * is documented in docs/miner-protocol.md ("From stored records to items").
 */

/** Where the record sits: its uri and time as read by the caller, and its true byte length. */
export interface RecordPlace {
  uri: string;
  /** ISO 8601 UTC. */
  datetime: string;
  contentBytes: number;
}

type Json = Record<string, unknown>;

/**
 * An `XContent` record (flat: `username`, `text`, `url`, `tweet_hashtags`, `user_*`, `tweet_id`,
 * counters, `media` as URLs). Some miners store the nested shape of the hosted API instead
 * (`user: {…}`, `tweet: {…}` with `in_reply_to: {…}`, `content`); its fields are read where the
 * flat ones are missing.
 */
export function xItemOf(record: Json, place: RecordPlace): XItem | undefined {
  const user = isRecord(record.user) ? record.user : {};
  const tweet = isRecord(record.tweet) ? record.tweet : {};
  const stored = text(record.username) ?? text(user.username);
  const username = stored === undefined ? undefined : xHandle(stored);
  const body = text(record.text) ?? text(record.content);
  const url = text(record.url) ?? text(record.uri);
  const hashtags = record.tweet_hashtags ?? tweet.hashtags ?? [];
  if (!username || body === undefined || url !== place.uri) return undefined;
  if (!Array.isArray(hashtags) || !hashtags.every((tag) => typeof tag === 'string'))
    return undefined;
  const media = mediaOf(record.media);
  if (media === undefined) return undefined;
  const tweetId = text(record.tweet_id) ?? text(tweet.id) ?? /\/status\/(\d+)/.exec(place.uri)?.[1];
  if (!tweetId) return undefined;
  // Flat field first, then the nested one (its name without the `user_` prefix where it has one).
  const userText = (flat: string, nested = flat) =>
    text(record[flat]) ?? text(user[nested]) ?? null;
  const userFlag = (flat: string, nested = flat) =>
    flag(record[flat]) ?? flag(user[nested]) ?? null;
  const userCount = (flat: string, nested: string) =>
    tally(record[flat]) ?? tally(user[nested]) ?? null;
  const tweetText = (flat: string, nested = flat) =>
    text(record[flat]) ?? text(tweet[nested]) ?? null;
  // The nested shape keeps the reply target as `tweet.in_reply_to: {user_id, username}`.
  const replyTarget = isRecord(tweet.in_reply_to) ? tweet.in_reply_to : {};
  const repliedToId = tweetText('in_reply_to_user_id') ?? text(replyTarget.user_id) ?? null;
  const repliedTo = tweetText('in_reply_to_username') ?? text(replyTarget.username) ?? null;
  const tweetFlag = (name: string) => flag(record[name]) ?? flag(tweet[name]) ?? null;
  const tweetCount = (name: string) => tally(record[name]) ?? tally(tweet[name]) ?? null;
  return {
    text: body,
    datetime: place.datetime,
    uri: place.uri,
    source: 'X',
    label: hashtags.length > 0 ? xLabelOf(hashtags[0]) : null,
    content_size_bytes: place.contentBytes,
    tweet: {
      id: tweetId,
      like_count: tweetCount('like_count'),
      retweet_count: tweetCount('retweet_count'),
      reply_count: tweetCount('reply_count'),
      quote_count: tweetCount('quote_count'),
      view_count: tweetCount('view_count'),
      bookmark_count: tweetCount('bookmark_count'),
      language: tweetText('language'),
      hashtags,
      // Not an XContent field: some scrapers store it, validators drop it before parsing.
      is_retweet: tweetFlag('is_retweet'),
      is_reply: tweetFlag('is_reply'),
      is_quote: tweetFlag('is_quote'),
      conversation_id: tweetText('conversation_id'),
      in_reply_to_user_id: repliedToId,
      in_reply_to_username: repliedTo === null ? null : xHandle(repliedTo),
      quoted_tweet_id: tweetText('quoted_tweet_id'),
    },
    user: {
      id: userText('user_id', 'id'),
      username,
      display_name: userText('user_display_name', 'display_name'),
      verified: userFlag('user_verified', 'verified'),
      user_blue_verified: userFlag('user_blue_verified'),
      followers_count: userCount('user_followers_count', 'followers_count'),
      following_count: userCount('user_following_count', 'following_count'),
      user_description: userText('user_description'),
      user_location: userText('user_location'),
      profile_image_url: userText('profile_image_url'),
      cover_picture_url: userText('cover_picture_url'),
    },
    media,
    content: body,
  };
}

/** A `RedditContent` record by alias (`communityName`, `createdAt`, `dataType`, `parentId`). */
export function redditItemOf(record: Json, place: RecordPlace): RedditItem | undefined {
  const { id, url, username, communityName, body, dataType, title, parentId } = record;
  if (!text(id) || url !== place.uri || !text(username) || typeof body !== 'string')
    return undefined;
  if (typeof communityName !== 'string' || !/^r\/./i.test(communityName)) return undefined;
  if (dataType !== 'post' && dataType !== 'comment') return undefined;
  if (title !== undefined && title !== null && typeof title !== 'string') return undefined;
  if (parentId !== undefined && parentId !== null && typeof parentId !== 'string') return undefined;
  const created = typeof record.createdAt === 'string' ? parseIsoDate(record.createdAt) : undefined;
  const media = mediaOf(record.media);
  if (!created || media === undefined) return undefined;
  const heading = typeof title === 'string' && title !== '' ? title : undefined;
  const ratio = record.upvote_ratio;
  return {
    uri: place.uri,
    datetime: place.datetime,
    source: 'REDDIT',
    label: labelOf(communityName),
    content_size_bytes: place.contentBytes,
    id: id as string,
    url: place.uri,
    username: username as string,
    communityName,
    body,
    // As the record keeps it (to the minute), as the hosted API answers it.
    createdAt: created.toISOString(),
    dataType,
    title: heading ?? null,
    parentId: typeof parentId === 'string' ? parentId : null,
    media,
    is_nsfw: flag(record.is_nsfw) ?? null,
    score: count(record.score) ?? null,
    upvote_ratio:
      typeof ratio === 'number' && Number.isFinite(ratio) && ratio >= 0 && ratio <= 1
        ? ratio
        : null,
    num_comments: tally(record.num_comments) ?? null,
    content: heading === undefined ? body : body === '' ? heading : `${heading}\n\n${body}`,
  };
}

/**
 * A record's `media`: URLs (the nested shape lists `{url, type}` objects: their URLs are kept).
 * Null when the record has none (an empty list stays empty here: answeredItem answers it as
 * null); undefined (refused) when it is not a list of URLs.
 */
function mediaOf(value: unknown): string[] | null | undefined {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return undefined;
  const urls: string[] = [];
  for (const entry of value) {
    const url = typeof entry === 'string' ? entry : isRecord(entry) ? text(entry.url) : undefined;
    if (!url) return undefined;
    urls.push(url);
  }
  return urls;
}

/** Labels are lower-cased and cut to 140 characters, as miners file them. */
function labelOf(value: string): string {
  return cutLabel(value.trim().toLowerCase());
}

/** An X post is filed under its first tag, a cashtag as a hashtag (`$AAPL` → `#aapl`). */
function xLabelOf(tag: string): string {
  return labelOf(tag.trim().replace(/^\$/, '#'));
}

/** A record's field when it is a string. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A count as items carry it: a safe integer (one every reader takes exactly), else undefined. */
export function count(value: unknown): number | undefined {
  return Number.isSafeInteger(value) ? (value as number) : undefined;
}

/**
 * A count of things (likes, views, followers, comments), never below 0: a miner's -5 likes is
 * no count, left out (null) as a fraction is (a hostile-miner audit's finding: it was answered
 * as sent). A Reddit score is a `count`: downvotes take it below 0.
 */
function tally(value: unknown): number | undefined {
  const read = count(value);
  return read !== undefined && read >= 0 ? read : undefined;
}

function flag(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}
