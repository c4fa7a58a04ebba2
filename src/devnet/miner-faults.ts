import { BucketKey, CompressedMinerIndex, DataItem, bucketStart } from '../network/protocol';
import { sourceOfId, toSourceName } from '../network/sources';
import { ParsedKeyword } from '../network/keywords';
import { QueryMatcher } from '../network/query-matcher';
import { WireDataEntity } from '../network/sn13/entities';
import { randomBase62 } from './corpus-text';
import { toWireEntity } from './miner-records';
import { Rng } from './rng';
import { HASHTAGS, SUBREDDITS } from './vocabulary';
import { HOUR_MS } from '../common/clock/durations';
import { xPostId } from '../network/x-post-id';

/** How dishonest miners bend their answers: fabricated, corrupted or inflated content. */

type Mutable = Record<string, unknown>;
type Violation = 'author' | 'keyword' | 'date' | 'future';

/**
 * Items that look real (cloned from corpus items) under made-up uris and ids, each breaking one
 * constraint of the query in turn (author, keyword, date). A query with no constraint cannot be
 * broken; those items are dated in the future instead, and only their uris give them away.
 */
export function fabricateItems(
  rng: Rng,
  query: QueryMatcher,
  templates: readonly DataItem[],
  count: number,
  now: Date,
): DataItem[] {
  if (templates.length === 0) return [];
  const violations: Violation[] = [];
  if (query.usernames.length > 0) violations.push('author');
  if (query.keywords.length > 0) violations.push('keyword');
  if (query.start || query.end) violations.push('date');
  if (violations.length === 0) violations.push('future');
  const items: DataItem[] = [];
  for (let index = 0; index < count; index++) {
    const item = withMadeUpIdentity(rng, structuredClone(rng.pick(templates)));
    items.push(
      withIdOfItsTime(violate(rng, item, violations[index % violations.length], query, now)),
    );
  }
  return items;
}

function withMadeUpIdentity(rng: Rng, item: DataItem): DataItem {
  if (item.source === 'X') {
    const id = `19${String(rng.int(10 ** 8, 10 ** 9 - 1))}${String(rng.int(10 ** 8, 10 ** 9 - 1))}`;
    item.tweet.id = id;
    item.tweet.conversation_id = id;
    item.uri = `https://x.com/${item.user.username}/status/${id}`;
    return item;
  }
  const shortId = `zz${randomBase62(rng, 5).toLowerCase()}`;
  item.id = `${item.dataType === 'post' ? 't3' : 't1'}_${shortId}`;
  item.uri = `https://www.reddit.com/${item.communityName}/comments/${shortId}/fabricated/`;
  item.url = item.uri;
  return item;
}

/**
 * An X item's made-up id made a snowflake of its time (the rest of the id in its sequence bits,
 * the top one set: corpus posts number theirs from 0), as a careful fabricator would make it:
 * the gateway drops a post dated away from its id's time, and these items are to be caught by
 * the constraint they break.
 */
function withIdOfItsTime(item: DataItem): DataItem {
  if (item.source !== 'X') return item;
  const madeUp = item.tweet.id;
  const id = xPostId(new Date(item.datetime), 0x200000 | Number(BigInt(madeUp) & 0x1fffffn));
  item.tweet.id = id;
  if (item.tweet.conversation_id === madeUp) item.tweet.conversation_id = id;
  item.uri = `https://x.com/${item.user.username}/status/${id}`;
  return item;
}

function violate(
  rng: Rng,
  item: DataItem,
  violation: Violation,
  query: QueryMatcher,
  now: Date,
): DataItem {
  switch (violation) {
    case 'author': {
      const username = `fake_${randomBase62(rng, 8).toLowerCase()}`;
      if (item.source === 'X') {
        item.user.username = username;
        item.uri = `https://x.com/${username}/status/${item.tweet.id}`;
      } else {
        item.username = username;
      }
      return item;
    }
    case 'keyword':
      return withoutKeyword(item, query.keywords[0]);
    case 'date': {
      const offset = rng.int(1, 72) * HOUR_MS;
      const date = query.start
        ? query.start.getTime() - offset
        : (query.end?.getTime() ?? now.getTime()) + offset;
      return setDatetime(item, new Date(date));
    }
    case 'future':
      return setDatetime(item, new Date(now.getTime() + rng.int(1, 48) * HOUR_MS));
  }
}

function setDatetime(item: DataItem, date: Date): DataItem {
  item.datetime = date.toISOString();
  if (item.source === 'REDDIT') item.createdAt = item.datetime;
  return item;
}

/** Removes every trace of the keyword (text, hashtag or subreddit) from the item. */
function withoutKeyword(item: DataItem, parsed: ParsedKeyword): DataItem {
  if (parsed.kind === 'subreddit') {
    if (item.source !== 'REDDIT') return item;
    const other = SUBREDDITS.find((entry) => `r/${entry.name.toLowerCase()}` !== parsed.label);
    const name = other?.name ?? 'fabricated';
    item.uri = item.uri.replace(item.communityName, `r/${name}`);
    item.url = item.uri;
    item.communityName = `r/${name}`;
    item.label = `r/${name.toLowerCase()}`;
    return item;
  }
  const needle = parsed.kind === 'hashtag' ? parsed.tag : parsed.text;
  if (item.source === 'X') {
    item.text = stripAll(item.text, needle);
    item.content = item.text;
    item.tweet.hashtags = item.tweet.hashtags.filter((tag) => tag.toLowerCase() !== needle);
    item.label = item.tweet.hashtags[0]?.toLowerCase() ?? null;
    return item;
  }
  item.body = stripAll(item.body, needle);
  item.content = stripAll(item.content, needle);
  if (item.title !== null) item.title = stripAll(item.title, needle);
  return item;
}

/** Removes the needle (lower-case, not empty) until the text no longer contains it in any case. */
function stripAll(text: string, needle: string): string {
  if (needle === '') return text;
  let result = text;
  for (let at = result.toLowerCase().indexOf(needle); at >= 0;) {
    result = result.slice(0, at) + result.slice(at + needle.length);
    at = result.toLowerCase().indexOf(needle);
  }
  return result;
}

/**
 * What a broken scraper adds to a record's text: U+0000 and a high and a low surrogate, each
 * unpaired. JSON carries them (as `\u0000`, `\ud800`, `\udc00`); Postgres stores none of them.
 */
export const BROKEN_TEXT = ' a\u0000b \ud800 \udc00';

/** A copy of the item whose record's text (X `text`, Reddit `body`) ends in BROKEN_TEXT. */
export function withBrokenText(item: DataItem): DataItem {
  return item.source === 'X'
    ? { ...item, text: `${item.text}${BROKEN_TEXT}` }
    : { ...item, body: `${item.body}${BROKEN_TEXT}` };
}

/** One of several schema breaks per entity, chosen by position so every kind shows up. */
export function corruptEntity(entity: WireDataEntity, variant: number): unknown {
  const copy = { ...entity } as unknown as Mutable;
  const record = JSON.parse(entity.content) as Mutable;
  switch (variant % 7) {
    case 0:
      delete copy.uri;
      break;
    case 1:
      copy.datetime = 1_700_000_000;
      break;
    case 2:
      copy.source = 7;
      break;
    case 3:
      copy.content_size_bytes = String(entity.content_size_bytes);
      break;
    case 4:
      copy.content = 'not a record';
      break;
    case 5:
      delete record[entity.source === 2 ? 'username' : 'id'];
      copy.content = JSON.stringify(record);
      break;
    default:
      record[entity.source === 2 ? 'tweet_hashtags' : 'dataType'] = 42;
      copy.content = JSON.stringify(record);
  }
  return copy;
}

export function corruptIndex(index: CompressedMinerIndex): unknown {
  const sources: Record<string, unknown[]> = {};
  for (const [sourceId, labels] of Object.entries(index.sources)) {
    sources[sourceId] = (labels ?? []).map((entry, position) => {
      if (position % 3 === 0) {
        return { ...entry, time_bucket_ids: entry.time_bucket_ids.map(String) };
      }
      if (position % 3 === 1) return { ...entry, sizes_bytes: entry.sizes_bytes.slice(1) };
      return { ...entry, label: 42 };
    });
  }
  return { sources };
}

export function overclaimIndex(index: CompressedMinerIndex, factor: number): CompressedMinerIndex {
  const sources: CompressedMinerIndex['sources'] = {};
  for (const [sourceId, labels] of Object.entries(index.sources)) {
    sources[sourceId] = (labels ?? []).map((entry) => ({
      ...entry,
      sizes_bytes: entry.sizes_bytes.map((size) => Math.round(size * factor)),
    }));
  }
  return { sources };
}

/** The honest index plus labels the miner has nothing for, one bucket per hour of the last day. */
export function fabricateIndex(index: CompressedMinerIndex, now: Date): CompressedMinerIndex {
  const latest = Math.floor(now.getTime() / HOUR_MS) - 1;
  const ids = Array.from({ length: 24 }, (_, offset) => latest - 23 + offset);
  const fake = (label: string) => ({
    label,
    time_bucket_ids: ids,
    sizes_bytes: ids.map(() => 250_000),
  });
  return {
    sources: {
      ...index.sources,
      '1': [...(index.sources['1'] ?? []), fake('r/fabricated_data')],
      '2': [...(index.sources['2'] ?? []), fake('#fabricated_data')],
    },
  };
}

/** The honest entities plus look-alikes with made-up uris dated outside the bucket. */
export function fabricateEntities(
  rng: Rng,
  honest: readonly WireDataEntity[],
  bucket: BucketKey,
  templates: readonly DataItem[],
): WireDataEntity[] {
  const source = toSourceName(sourceOfId(bucket.source)!);
  const pool = templates.filter((item) => item.source === source);
  if (pool.length === 0) return [...honest];
  const outside = new Date(bucketStart(bucket.timeBucket).getTime() - rng.int(2, 48) * HOUR_MS);
  const fabricated = Array.from({ length: Math.max(3, honest.length) }, () =>
    toWireEntity(
      withIdOfItsTime(
        setDatetime(withMadeUpIdentity(rng, structuredClone(rng.pick(pool))), outside),
      ),
    ),
  );
  return [...honest, ...fabricated];
}

/** The bucket's items dated 2 to 48 hours before its hour: real posts, the wrong time. */
export function outsideTheHour(
  rng: Rng,
  items: readonly DataItem[],
  bucket: BucketKey,
): DataItem[] {
  const start = bucketStart(bucket.timeBucket).getTime();
  return items.map((item) =>
    setDatetime(structuredClone(item), new Date(start - rng.int(2, 48) * HOUR_MS + 60_000)),
  );
}

/**
 * The bucket's items under another label: an X post's bucket tag replaced by another (so its
 * first tag is not the bucket's), a Reddit item moved to another subreddit.
 */
export function underAnotherLabel(items: readonly DataItem[], bucket: BucketKey): DataItem[] {
  const label = bucket.label?.toLowerCase() ?? null;
  return items.map((original) => {
    const item = structuredClone(original);
    if (item.source === 'X') {
      const other = HASHTAGS.find((entry) => entry.tag !== label)!.tag;
      const tags = item.tweet.hashtags.map((tag) => (tag.toLowerCase() === label ? other : tag));
      item.tweet.hashtags = [
        ...new Set(tags[0]?.toLowerCase() === other ? tags : [other, ...tags]),
      ];
      if (label) item.content = item.content.replace(new RegExp(escapeRegExp(label), 'gi'), other);
      if (!item.content.toLowerCase().includes(other)) item.content = `${item.content} ${other}`;
      item.label = other;
      return item;
    }
    const other = SUBREDDITS.find((entry) => `r/${entry.name.toLowerCase()}` !== label)!.name;
    item.uri = item.uri.replace(item.communityName, `r/${other}`);
    item.url = item.uri;
    item.communityName = `r/${other}`;
    item.label = `r/${other.toLowerCase()}`;
    return item;
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One of several schema breaks of a stored record (GetContentsByBuckets), chosen by position. */
export function corruptRecord(content: string, variant: number): string {
  const record = JSON.parse(content) as Mutable;
  const isX = 'tweet_hashtags' in record;
  switch (variant % 3) {
    case 0:
      return 'not a record';
    case 1:
      delete record[isX ? 'username' : 'id'];
      return JSON.stringify(record);
    default:
      record[isX ? 'tweet_hashtags' : 'dataType'] = 42;
      return JSON.stringify(record);
  }
}
