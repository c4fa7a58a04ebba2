import { inItemOrder } from './item-order';
import { DataItem, RedditItem, XItem, xHandle } from './protocol';
import { count } from './sn13/records';

/**
 * Items as releases before the hosted-API shapes stored them (task rows, bucket fetches): X
 * items had `content` but no `text`, `media` as `{url, type}` objects (empty when none) and
 * none of the newer fields; no item had `content_size_bytes`. `currentItemShape` reads either
 * shape and answers the current one: media as URLs (null when none), every field the old shape
 * did not keep null, never made up, X handles without `@`, and counts as records.ts reads them
 * (docs/decisions.md, "Items in the hosted API's shape").
 */

interface LegacyXItem {
  uri: string;
  datetime: string;
  source: 'X';
  label: string | null;
  content: string;
  user: Pick<
    XItem['user'],
    'username' | 'display_name' | 'id' | 'verified' | 'followers_count' | 'following_count'
  >;
  tweet: Pick<
    XItem['tweet'],
    | 'id'
    | 'like_count'
    | 'retweet_count'
    | 'reply_count'
    | 'quote_count'
    | 'hashtags'
    | 'is_retweet'
    | 'is_reply'
    | 'is_quote'
    | 'conversation_id'
  >;
  media: { url: string; type: string }[];
}

type LegacyRedditItem = Omit<
  RedditItem,
  'content_size_bytes' | 'media' | 'is_nsfw' | 'score' | 'upvote_ratio' | 'num_comments'
>;

export type StoredItemShape = DataItem | LegacyXItem | LegacyRedditItem;

/**
 * Every path that returns or writes items read back from jsonb (the item store's reads, so stored
 * answers and query_bucket, and task datasets) reads them through here, so their keys come in
 * the declared order (inItemOrder), not Postgres'.
 */
export function currentItemShape(item: StoredItemShape): DataItem {
  if (!('content_size_bytes' in item))
    return item.source === 'X' ? withCounts(withHandles(currentX(item))) : currentReddit(item);
  const ordered = inItemOrder(item);
  return ordered.source === 'X' ? withCounts(withHandles(ordered)) : withRedditCounts(ordered);
}

const TWEET_COUNTS = [
  'like_count',
  'retweet_count',
  'reply_count',
  'quote_count',
  'view_count',
  'bookmark_count',
] as const;
const USER_COUNTS = ['followers_count', 'following_count'] as const;
const REDDIT_COUNTS = ['score', 'num_comments'] as const;

/**
 * Counts that are safe integers, the others null, as records.ts reads them from miners: rows
 * stored by earlier releases may hold a fraction (1.5) or a number past 2^53 (2^63), which the
 * Parquet datasets' INT64 columns refuse (docs/decisions.md, "Scraping task lifecycle").
 */
function withCounts(item: XItem): XItem {
  const tweet = countsOf(item.tweet, TWEET_COUNTS);
  const user = countsOf(item.user, USER_COUNTS);
  return tweet === item.tweet && user === item.user ? item : { ...item, tweet, user };
}

function withRedditCounts(item: RedditItem): RedditItem {
  return countsOf(item, REDDIT_COUNTS);
}

/** `holder` itself when its counts are sound (nearly always), else a copy with the others null. */
function countsOf<T extends Record<K, number | null>, K extends string>(
  holder: T,
  keys: readonly K[],
): T {
  if (keys.every((key) => holder[key] === null || count(holder[key]) !== undefined)) return holder;
  const sound = { ...holder };
  for (const key of keys) (sound as Record<K, number | null>)[key] = count(holder[key]) ?? null;
  return sound;
}

/** X handles without `@` (xHandle): items stored before they were normalized may have it. */
function withHandles(item: XItem): XItem {
  const replyTo = item.tweet.in_reply_to_username;
  if (!item.user.username.startsWith('@') && !replyTo?.startsWith('@')) return item;
  return {
    ...item,
    user: { ...item.user, username: xHandle(item.user.username) },
    tweet: { ...item.tweet, in_reply_to_username: replyTo === null ? null : xHandle(replyTo) },
  };
}

function currentX(item: LegacyXItem): XItem {
  const { user, tweet } = item;
  return {
    text: item.content,
    datetime: item.datetime,
    uri: item.uri,
    source: 'X',
    label: item.label,
    content_size_bytes: null,
    tweet: {
      id: tweet.id,
      like_count: tweet.like_count,
      retweet_count: tweet.retweet_count,
      reply_count: tweet.reply_count,
      quote_count: tweet.quote_count,
      view_count: null,
      bookmark_count: null,
      language: null,
      hashtags: tweet.hashtags,
      is_retweet: tweet.is_retweet,
      is_reply: tweet.is_reply,
      is_quote: tweet.is_quote,
      conversation_id: tweet.conversation_id,
      in_reply_to_user_id: null,
      in_reply_to_username: null,
      quoted_tweet_id: null,
    },
    user: {
      id: user.id,
      username: user.username,
      display_name: user.display_name,
      verified: user.verified,
      user_blue_verified: null,
      followers_count: user.followers_count,
      following_count: user.following_count,
      user_description: null,
      user_location: null,
      profile_image_url: null,
      cover_picture_url: null,
    },
    // The old shape listed none as empty, where the record had none (null).
    media: item.media.length > 0 ? item.media.map((entry) => entry.url) : null,
    content: item.content,
  };
}

function currentReddit(item: LegacyRedditItem): RedditItem {
  return {
    uri: item.uri,
    datetime: item.datetime,
    source: 'REDDIT',
    label: item.label,
    content_size_bytes: null,
    id: item.id,
    url: item.url,
    username: item.username,
    communityName: item.communityName,
    body: item.body,
    createdAt: item.createdAt,
    dataType: item.dataType,
    // Releases before they were always sent left them out where they did not apply.
    title: item.title ?? null,
    parentId: item.parentId ?? null,
    media: null,
    is_nsfw: null,
    score: null,
    upvote_ratio: null,
    num_comments: null,
    content: item.content,
  };
}
