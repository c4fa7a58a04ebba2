/**
 * The gateway's own vocabulary for the miner network: sources, time buckets, the compressed miner
 * index, the item shapes it answers with, and the metagraph file. The wire format of the calls
 * to miners (Bittensor's dendrite/axon protocol and subnet 13's synapses) is in `bittensor/` and
 * `sn13/`; docs/miner-protocol.md describes both for people.
 */

import { Source } from '../common/source';
import { SourceId } from './sn13/sources';

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

// Fields a miner's stored record may lack are null (sn13/entities.ts maps the records).

export interface XUser {
  username: string;
  display_name: string | null;
  id: string | null;
  verified: boolean | null;
  followers_count: number | null;
  following_count: number | null;
}

export interface XTweet {
  id: string;
  like_count: number | null;
  retweet_count: number | null;
  reply_count: number | null;
  quote_count: number | null;
  /** As written in the text (case preserved), each starting with `#`. */
  hashtags: string[];
  is_retweet: boolean | null;
  is_reply: boolean | null;
  is_quote: boolean | null;
  conversation_id: string | null;
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
  /** Posts: the title; comments: null (the hosted API's items have both fields on every item). */
  title: string | null;
  createdAt: string;
  dataType: 'post' | 'comment';
  /** Comments: the `id` of the post commented on; posts: null. */
  parentId: string | null;
}

export type DataItem = XItem | RedditItem;

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

/** An on-demand query as the network answers it (the API's request, parsed and defaulted). */
export interface NetworkQuery {
  source: Source;
  usernames: string[];
  keywords: string[];
  startDate: Date | null;
  endDate: Date;
  limit: number;
  /** `all` (default): an item must hold every keyword; `any`: one of them is enough. */
  keywordMode?: 'all' | 'any';
}

/** One (source, label, hour) of a miner's data: what GetDataEntityBucket asks for. */
export interface BucketKey {
  source: SourceId;
  /** Normalized; null for data without a label. */
  label: string | null;
  timeBucket: number;
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
  /** `devnet` when the neurons are simulated (the devnet writes it); absent for real ones. */
  network?: 'devnet';
  netuid: number;
  block: number;
  /** ISO 8601 UTC time the file was written. */
  updated_at: string;
  neurons: MetagraphNeuron[];
}
