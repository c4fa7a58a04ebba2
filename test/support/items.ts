import { toWireEntity } from '../../src/devnet/miner-records';
import { DataItem, RedditItem } from '../../src/network/protocol';
import { convertEntity } from '../../src/network/sn13/entities';

/**
 * A Reddit comment in the current item shape, as miners answer it and tasks store it; a test
 * overrides what it is about.
 */
export function redditComment(overrides: Partial<RedditItem> = {}): RedditItem {
  return {
    uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/def/',
    datetime: '2026-11-01T09:05:00.000Z',
    source: 'REDDIT',
    label: 'r/bitcoin',
    content_size_bytes: 250,
    id: 't1_def',
    url: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/def/',
    username: 'dave',
    communityName: 'r/Bitcoin',
    body: 'A reply',
    createdAt: '2026-11-01T09:05:00.000Z',
    dataType: 'comment',
    title: null,
    parentId: 't3_abc',
    media: null,
    is_nsfw: null,
    score: -2,
    upvote_ratio: null,
    num_comments: null,
    content: 'A reply',
    ...overrides,
  };
}

/**
 * A date as the hosted API writes an item's (Python's `datetime.isoformat()` of a UTC time): what
 * on-demand answers and dataset lines carry, never `toISOString()`'s `…000Z`.
 */
export const HOSTED_DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/;

/** `item` as a live answer has it: its entity as a miner serves it, read by the gateway. */
export function liveItem(item: DataItem): DataItem {
  return convertEntity(toWireEntity(item), item.source === 'X' ? 'x' : 'reddit')!.item;
}

/**
 * Every key path of `value` in order (`tweet`, `tweet.id`, …), nested objects included, arrays
 * not: what a client's `json_normalize` or CSV columns follow.
 */
export function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    `${prefix}${key}`,
    ...keyPaths(inner, `${prefix}${key}.`),
  ]);
}
