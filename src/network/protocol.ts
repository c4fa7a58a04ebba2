/**
 * Types of the JSON-over-HTTP protocol between the gateway (as a validator) and miners, shared by
 * the gateway's miner client and the simulated devnet miners. docs/miner-protocol.md describes
 * the same protocol for people; keep the two in step.
 */

export type DataSource = 'X' | 'REDDIT';

export const DATA_SOURCES: readonly DataSource[] = ['X', 'REDDIT'];

/** Numeric source ids used in the miner index, as in the original network. */
export type SourceId = 1 | 2;

export const SOURCE_IDS: Readonly<Record<DataSource, SourceId>> = { REDDIT: 1, X: 2 };

export function sourceToId(source: DataSource): SourceId {
  return SOURCE_IDS[source];
}

/** Accepts the id as a number or as the string key used in the index JSON (`"1"`, `"2"`). */
export function sourceFromId(id: number | string): DataSource | undefined {
  const numeric = typeof id === 'string' ? Number(id) : id;
  if (numeric === SOURCE_IDS.REDDIT) return 'REDDIT';
  if (numeric === SOURCE_IDS.X) return 'X';
  return undefined;
}

/** Clients may write the source in any case (`x`, `Reddit`); items always carry it upper-case. */
export function parseDataSource(value: string): DataSource | undefined {
  const upper = value.trim().toUpperCase();
  return upper === 'X' || upper === 'REDDIT' ? upper : undefined;
}

/** Paths of the three miner endpoints (each is `POST /<name>`). */
export type MinerEndpoint = 'OnDemandRequest' | 'GetMinerIndex' | 'GetDataEntityBucket';

export const MINER_ENDPOINTS: readonly MinerEndpoint[] = [
  'OnDemandRequest',
  'GetMinerIndex',
  'GetDataEntityBucket',
];

/** Header naming the calling validator; miners refuse requests without it. Lower-case as Node sees it. */
export const VALIDATOR_HOTKEY_HEADER = 'x-validator-hotkey';

/** A miner index with more buckets than this is rejected by the gateway. */
export const MAX_INDEX_BUCKETS = 350_000;

/** Data older than this is worth nothing to the network. */
export const MAX_DATA_AGE_DAYS = 30;

/** Labels are compared and stored lower-cased and trimmed, at most this long. */
export const MAX_LABEL_LENGTH = 140;

export function normalizeLabel(label: string): string {
  return label.trim().toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Items

export interface XUser {
  username: string;
  display_name: string;
  id: string;
  verified: boolean;
  followers_count: number;
  following_count: number;
}

export interface XTweet {
  id: string;
  like_count: number;
  retweet_count: number;
  reply_count: number;
  quote_count: number;
  /** As written in the text (case preserved), each starting with `#`. */
  hashtags: string[];
  is_retweet: boolean;
  is_reply: boolean;
  is_quote: boolean;
  conversation_id: string;
}

export interface XMedia {
  url: string;
  type: 'photo' | 'video' | 'animated_gif';
}

export interface XItem {
  uri: string;
  /** ISO 8601 UTC. */
  datetime: string;
  source: 'X';
  /** First hashtag, lower-cased; null when the post has none. */
  label: string | null;
  content: string;
  user: XUser;
  tweet: XTweet;
  media: XMedia[];
}

export interface RedditItem {
  uri: string;
  datetime: string;
  source: 'REDDIT';
  /** `r/<subreddit>`, lower-cased. */
  label: string;
  /** Posts: title, blank line, body. Comments: the body. */
  content: string;
  /** Reddit fullname: `t3_…` for posts, `t1_…` for comments. */
  id: string;
  url: string;
  username: string;
  /** `r/<Subreddit>` as Reddit spells it. */
  communityName: string;
  body: string;
  /** Posts only. */
  title?: string;
  createdAt: string;
  dataType: 'post' | 'comment';
  /** Comments only: the `id` of the post commented on. */
  parentId?: string;
}

export type DataItem = XItem | RedditItem;

// ---------------------------------------------------------------------------------------------
// POST /OnDemandRequest

export interface OnDemandMinerRequest {
  source: DataSource;
  usernames: string[];
  keywords: string[];
  /** ISO 8601; a value without a zone means UTC. */
  start_date: string | null;
  end_date: string | null;
  limit: number;
}

/** The miner's matching items, newest first, at most `limit`. */
export interface OnDemandMinerResponse {
  data: DataItem[];
}

// ---------------------------------------------------------------------------------------------
// POST /GetMinerIndex (body `{}`)

export type GetMinerIndexRequest = Record<string, never>;

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

// ---------------------------------------------------------------------------------------------
// POST /GetDataEntityBucket

export interface DataEntityBucketId {
  time_bucket_id: number;
  source: SourceId;
  label: string | null;
}

export interface GetDataEntityBucketRequest {
  bucket_id: DataEntityBucketId;
}

export interface DataEntity {
  uri: string;
  datetime: string;
  source: DataSource;
  label: string | null;
  /** Honest miners report `Buffer.byteLength(JSON.stringify(content))`. */
  content_size_bytes: number;
  content: DataItem;
}

export interface GetDataEntityBucketResponse {
  data_entities: DataEntity[];
}

/** Body of every non-2xx answer from a miner. */
export interface MinerErrorResponse {
  error: string;
}

// ---------------------------------------------------------------------------------------------
// Time buckets: whole hours since the Unix epoch, UTC.

const HOUR_MS = 3_600_000;

export function timeBucketId(date: Date): number {
  return Math.floor(date.getTime() / HOUR_MS);
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
  /** In TAO. */
  stake: number;
  /** 0..1; miners' incentives sum to about 1. */
  incentive: number;
  validator_permit: boolean;
}

export interface MetagraphFile {
  netuid: number;
  block: number;
  /** ISO 8601 UTC time the file was written. */
  updated_at: string;
  neurons: MetagraphNeuron[];
}
