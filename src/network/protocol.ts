/**
 * The gateway's own vocabulary for the miner network: sources, time buckets, the compressed miner
 * index, the item shapes it answers with, and the metagraph file. The wire format of the calls
 * to miners (Bittensor's dendrite/axon protocol and subnet 13's synapses) is in `bittensor/` and
 * `sn13/`; docs/miner-protocol.md describes both for people.
 */

import { Source } from '../common/source';
import { SourceId } from './sources';
import { HOUR_MS } from '../common/clock/durations';
import { composed, firstCharacters } from '../common/characters';
import { isXTag, parseKeyword } from './keywords';

/** A miner index with more buckets than this is rejected by the gateway. */
export const MAX_INDEX_BUCKETS = 350_000;

/**
 * The most a bucket may hold: the subnet's DATA_ENTITY_BUCKET_SIZE_LIMIT_BYTES (128 MiB). Miners
 * report larger buckets at this size; a claim above it is not a bucket the subnet can serve.
 */
export const MAX_BUCKET_BYTES = 128 * 1024 * 1024;

/** Data older than this is worth nothing to the network. */
export const MAX_DATA_AGE_DAYS = 30;

/** Labels are compared and stored lower-cased and trimmed, at most this long. */
export const MAX_LABEL_LENGTH = 140;

export function normalizeLabel(label: string): string {
  return label.trim().toLowerCase();
}

/**
 * The label cut to MAX_LABEL_LENGTH code points, as miners cut theirs (Python slicing): a cut by
 * UTF-16 units would keep fewer characters and could end in half a surrogate pair.
 */
export function cutLabel(label: string): string {
  return firstCharacters(label, MAX_LABEL_LENGTH);
}

/**
 * The label a keyword names, as miners file it, or undefined when it names none. X: one hashtag,
 * or one cashtag (`$AAPL` is filed as `#aapl`; isXTag); Reddit: a subreddit (`r/name`,
 * `/r/name`, `/name`). `#bitcoin halving` or `$AAPL earnings` names none: planned as labels, no
 * miner held them and the answer was an empty success, though posts under `#bitcoin` match.
 */
export function labelOfKeyword(keyword: string, source: Source): string | undefined {
  const trimmed = composed(keyword).trim();
  if (source === 'x' && trimmed.startsWith('$') && isXTag(trimmed))
    return cutLabel(normalizeLabel(`#${trimmed.slice(1)}`));
  const parsed = parseKeyword(trimmed, source);
  if (parsed.kind === 'hashtag') return cutLabel(parsed.tag);
  if (parsed.kind === 'subreddit') return parsed.label;
  return undefined;
}

/**
 * The label a statistics query names (`get_bytes_by_label`, `query_bucket`'s `label`), read as
 * an on-demand keyword's (labelOfKeyword): `/r/bitcoin` and `/bitcoin` are `r/bitcoin`, `$BTC`
 * is `#btc`, under the query's source or, without one, under either. Any other text is only
 * trimmed and lower-cased (normalizeLabel), as every label was before: read so, those
 * spellings, which on-demand and set_desirabilities take, got zeros (an API audit's finding).
 */
export function statisticsLabel(label: string, source?: Source): string {
  const sources: Source[] = source ? [source] : ['x', 'reddit'];
  for (const each of sources) {
    const named = labelOfKeyword(label, each);
    if (named !== undefined) return named;
  }
  return normalizeLabel(composed(label));
}

// ---------------------------------------------------------------------------------------------
// Items

// The shapes of the subnet's hosted on-demand API (`api_version` 1.0), built from the miner's
// stored record by sn13/records.ts. Fields a record lacks are null, never made up.

export interface XUser {
  id: string | null;
  /** Handle, without `@` (xHandle). */
  username: string;
  display_name: string | null;
  verified: boolean | null;
  user_blue_verified: boolean | null;
  followers_count: number | null;
  following_count: number | null;
  user_description: string | null;
  user_location: string | null;
  profile_image_url: string | null;
  cover_picture_url: string | null;
}

export interface XTweet {
  id: string;
  like_count: number | null;
  retweet_count: number | null;
  reply_count: number | null;
  quote_count: number | null;
  view_count: number | null;
  bookmark_count: number | null;
  /** As X tags it (`en`, `ja`, `und`…). */
  language: string | null;
  /** As written in the text (case preserved), each starting with `#`. */
  hashtags: string[];
  is_retweet: boolean | null;
  is_reply: boolean | null;
  is_quote: boolean | null;
  conversation_id: string | null;
  in_reply_to_user_id: string | null;
  in_reply_to_username: string | null;
  quoted_tweet_id: string | null;
}

export interface XItem {
  /** The text of the post. */
  text: string;
  /** ISO 8601 UTC. */
  datetime: string;
  uri: string;
  source: 'X';
  /** First hashtag, lower-cased; null when the post has none. */
  label: string | null;
  /**
   * UTF-8 byte length of the stored record the item was read from; null only on items a
   * release before the hosted-API shapes stored (see legacy-items.ts).
   */
  content_size_bytes: number | null;
  tweet: XTweet;
  user: XUser;
  /** URLs of photos and videos as the record lists them (none: null; an empty list: []). */
  media: string[] | null;
  /** @deprecated The same as `text` (the gateway's name for it before the hosted-API shapes). */
  content: string;
}

export interface RedditItem {
  uri: string;
  datetime: string;
  source: 'REDDIT';
  /** `r/<subreddit>`, lower-cased. */
  label: string;
  /** As on X items. */
  content_size_bytes: number | null;
  /** Reddit fullname: `t3_…` for posts, `t1_…` for comments. */
  id: string;
  url: string;
  username: string;
  /** `r/<Subreddit>` as Reddit spells it. */
  communityName: string;
  body: string;
  /** The record's time, to the minute as miners store it (`datetime` keeps the second). */
  createdAt: string;
  dataType: 'post' | 'comment';
  /** Posts: the title; comments: null (the hosted API's items have both fields on every item). */
  title: string | null;
  /** Comments: the `id` of the post commented on; posts: null. */
  parentId: string | null;
  media: string[] | null;
  is_nsfw: boolean | null;
  score: number | null;
  /** 0..1. */
  upvote_ratio: number | null;
  num_comments: number | null;
  /** @deprecated Posts: title, blank line, body. Comments: the body. */
  content: string;
}

export type DataItem = XItem | RedditItem;

/**
 * An X handle as items carry it: without `@`. Miners' records hold either form (the subnet's
 * apidojo scraper stores `author.userName` bare, its older and on-demand scrapers `@name`; its
 * validator compares them with the `@` removed); the item shape documents the bare handle.
 */
export function xHandle(name: string): string {
  return name.startsWith('@') ? name.slice(1) : name;
}

/**
 * The characters of a username as each source spells it: an X handle's letters, digits and `_`
 * (X allows 15; older handles and upstream's `\w+` may be longer, so 50), a Reddit name's `-`
 * too (Reddit allows 20). A query's username must be one once read as authorName.
 */
export const X_HANDLE_CHARACTERS = '[A-Za-z0-9_]{1,50}';
export const REDDIT_NAME_CHARACTERS = '[A-Za-z0-9_-]{1,50}';
const AUTHOR_NAMES: Record<Source, RegExp> = {
  x: new RegExp(`^${X_HANDLE_CHARACTERS}$`),
  reddit: new RegExp(`^${REDDIT_NAME_CHARACTERS}$`),
};

/**
 * An author as a query names it (X handle or Reddit user): trimmed, without `@`, its case kept.
 * What OnDemandRequest sends miners, who match the record's author exactly (sn13/messages.ts).
 */
export function authorName(name: string): string {
  return xHandle(name.trim());
}

/**
 * True when the name, read as authorName, is a username of the source: `"@@elon"` (read
 * `@elon`) or `"@ elon"` (read ` elon`) is no one's, and the query asked miners and the matcher
 * for an author no record has.
 */
export function namesAuthor(name: string, source: Source): boolean {
  return AUTHOR_NAMES[source].test(authorName(name));
}

/**
 * An author as queries compare it: authorName lower-cased. The matcher, the stored-data plan and
 * the item store's `username` column all use this one.
 */
export function authorKey(name: string): string {
  return authorName(name).toLowerCase();
}

/**
 * An item's author as queries compare it (authorKey): X's `user.username`, Reddit's `username`;
 * '' for an item without one. The one rule for an item's author: the item store's `username`,
 * the erased-authors register, an erasure's rows (isAuthorOf) and corroboration (copyKey).
 */
export function authorOfItem(item: DataItem): string {
  const name: unknown = item.source === 'X' ? item.user?.username : item.username;
  return typeof name === 'string' ? authorKey(name) : '';
}

// ---------------------------------------------------------------------------------------------
// The compressed miner index (GetMinerIndex answers it as a JSON string)

/** All buckets of one (source, label); `sizes_bytes[i]` belongs to `time_bucket_ids[i]`. */
export interface CompressedLabelBuckets {
  label: string | null;
  time_bucket_ids: number[];
  sizes_bytes: number[];
}

/** Keyed by source id as a string (`"1"` = REDDIT, `"2"` = X), as JSON object keys must be. */
export interface CompressedMinerIndex {
  sources: Partial<Record<string, CompressedLabelBuckets[]>>;
}

/**
 * How a query's keywords combine: `all` = an item satisfies every keyword, `any` = at least one.
 * Usernames combine with the keywords by AND in both modes.
 */
export const KEYWORD_MODES = ['all', 'any'] as const;
export type KeywordMode = (typeof KEYWORD_MODES)[number];

/** An on-demand query as the network answers it (the API's request, parsed and defaulted). */
export interface NetworkQuery {
  source: Source;
  usernames: string[];
  keywords: string[];
  keywordMode: KeywordMode;
  startDate: Date | null;
  endDate: Date;
  limit: number;
  /**
   * When the limit cuts a live answer, keep the newest items rather than the best corroborated:
   * for a caller paging back by time (task collection), which takes the oldest item returned
   * as the end of its next page and must not skip newer items left out.
   */
  newestFirst?: boolean;
}

/**
 * Where an on-demand answer came from: `live` OnDemandRequest calls, or the miners' stored data.
 */
export const ANSWER_ORIGINS = ['live', 'stored'] as const;
export type AnswerOrigin = (typeof ANSWER_ORIGINS)[number];

/** One (source, label, hour) of a miner's data: what GetDataEntityBucket asks for. */
export interface BucketKey {
  source: SourceId;
  /** Normalized; null for data without a label. */
  label: string | null;
  timeBucket: number;
}

// ---------------------------------------------------------------------------------------------
// Time buckets: whole hours since the Unix epoch, UTC.

export function timeBucketId(date: Date): number {
  return Math.floor(date.getTime() / HOUR_MS);
}

/** The oldest hour whose data is worth anything at `now` (MAX_DATA_AGE_DAYS back). */
export function oldestUsefulBucket(now: Date): number {
  return timeBucketId(now) - MAX_DATA_AGE_DAYS * 24;
}

/** First instant of the bucket (inclusive). */
export function bucketStart(id: number): Date {
  return new Date(id * HOUR_MS);
}

/** First instant after the bucket (exclusive), i.e. the start of the next bucket. */
export function bucketEnd(id: number): Date {
  return new Date((id + 1) * HOUR_MS);
}

// ---------------------------------------------------------------------------------------------
// Metagraph file: the devnet writes it, the gateway's file-based metagraph source reads it.

export interface MetagraphNeuron {
  uid: number;
  hotkey: string;
  coldkey: string;
  /** `http://host:port` of the neuron's axon; null when it serves none (most validators). */
  axon_url: string | null;
  /**
   * Stake weight on the subnet in alpha: alpha stake plus 0.18 × root TAO stake, not TAO (what the
   * subnet weighs); null when the source could not give it (a node answering only get_neurons_lite:
   * docs/decisions.md, "The metagraph from the chain").
   */
  stake: number | null;
  /** 0..1; miners' incentives sum to about 1. */
  incentive: number;
  validator_permit: boolean;
}

export interface MetagraphFile {
  /** `devnet` when the neurons are simulated (the devnet writes it); absent for real ones. */
  network?: 'devnet';
  netuid: number;
  block: number;
  /** ISO 8601 UTC time the file was written. */
  updated_at: string;
  neurons: MetagraphNeuron[];
  /**
   * The genesis hash of the chain a node's read came from (ChainMetagraphSource sets it); never
   * taken from a file.
   */
  genesis_hash?: string;
}
