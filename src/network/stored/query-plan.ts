import { Source } from '../../common/source';
import {
  authorKey,
  labelOfKeyword,
  MAX_DATA_AGE_DAYS,
  NetworkQuery,
  timeBucketId,
} from '../protocol';
import { compileQuery, QueryMatcher } from '../query-matcher';
import { SourceId, toSourceId, toSourceName } from '../sources';
import { DAY_MS } from '../../common/clock/durations';

/**
 * How an on-demand query is answered from miners' stored data: which (source, label, hour)
 * buckets hold its answer, which stored items it reads, and how they are filtered. Miners file
 * data by label only, so only label-shaped keywords (X `#tag` and `$tag`, Reddit `r/name`) say
 * which buckets to fetch; usernames and other keywords filter what those buckets hold.
 */
export interface StoredQueryPlan {
  source: Source;
  sourceId: SourceId;
  /** The buckets' labels, normalized as miners file them; empty: nothing to fetch. */
  labels: string[];
  /** Hours to fetch, inclusive, newest first; `fromBucket > toBucket`: an empty range. */
  fromBucket: number;
  toBucket: number;
  /** Bounds on the items' time, inclusive. */
  from: Date;
  to: Date;
  /**
   * Labels the store is read by; undefined: every label of the source, when a matching item
   * may sit under any label (no label-shaped keyword, or `any` with another keyword).
   */
  readLabels: string[] | undefined;
  /**
   * `partial` when the labels do not cover every possible match (only stored items answer), or
   * when the range reaches before the 30-day horizon (those hours are neither fetched nor read).
   */
  coverage: 'complete' | 'partial';
  /** Usernames lower-cased, without `@` (filtered by the store). */
  usernames: string[];
  /** Items the fetch plans for: the limit, more when filters thin out the labels' items. */
  target: number;
  limit: number;
  /** The query's rules (dates, authors, keywords in its mode) over an item. */
  matches(item: unknown): boolean;
}

/**
 * When a query filters inside its labels (usernames, other keywords, several labels that must
 * all hold), a bucket's items answer it only in part; the fetch plans for this many times the
 * limit, newest first. A guess: the store keeps what was fetched, so a later query of the same
 * labels reads the older hours it needs from there.
 */
export const FILTERED_OVERSAMPLING = 4;

export function planStoredQuery(query: NetworkQuery, now: Date): StoredQueryPlan {
  const mode = query.keywordMode;
  const keywords = query.keywords.map((keyword) => ({
    keyword,
    label: labelOfKeyword(keyword, query.source),
  }));
  const labels = [
    ...new Set(keywords.flatMap(({ label }) => (label === undefined ? [] : [label]))),
  ];
  const others = keywords.filter(({ label }) => label === undefined).length;
  // `all`: every match holds one of the labels, so it sits in one of their buckets (or under
  // another label when the tag is not its first: see the README). `any`: a match of another
  // keyword may sit anywhere.
  const covered = labels.length > 0 && (mode === 'all' || others === 0);

  const horizon = new Date(now.getTime() - MAX_DATA_AGE_DAYS * DAY_MS);
  const from = query.startDate && query.startDate > horizon ? query.startDate : horizon;
  // An hour of the range before the horizon's is not planned: the range said `complete`, and
  // "no data" of days nobody was asked for. By hour, as planned: a start a few seconds older
  // than the horizon (a client's "30 days ago", sent a moment before) reaches no further. A
  // range that ends before the horizon too, within its hour, is planned not at all (a time
  // audit's finding: it said "no data", complete).
  const pastHorizon =
    timeBucketId(query.startDate ?? query.endDate) < timeBucketId(horizon) ||
    query.endDate < horizon;
  const to = query.endDate < now ? query.endDate : now;
  const usernames = query.usernames.map(authorKey).filter((name) => name !== '');
  const filtered =
    usernames.length > 0 || (mode === 'all' ? others > 0 || labels.length > 1 : false);
  return {
    source: query.source,
    sourceId: toSourceId(query.source),
    labels: covered ? labels : [],
    fromBucket: timeBucketId(from),
    toBucket: from > to ? timeBucketId(from) - 1 : timeBucketId(to),
    from,
    to,
    readLabels: covered ? labels : undefined,
    coverage: covered && !pastHorizon ? 'complete' : 'partial',
    usernames,
    target: filtered ? query.limit * FILTERED_OVERSAMPLING : query.limit,
    limit: query.limit,
    matches: matcherOf(query, mode),
  };
}

/** The query's rules: in `any` mode an item answers when one keyword matches. */
function matcherOf(query: NetworkQuery, mode: 'all' | 'any'): (item: unknown) => boolean {
  const base = {
    source: toSourceName(query.source),
    usernames: query.usernames,
    start_date: query.startDate,
    end_date: query.endDate,
  };
  if (mode === 'all' || query.keywords.length <= 1) {
    const matcher = compileQuery({ ...base, keywords: query.keywords });
    return (item) => matcher.matches(item);
  }
  const matchers: QueryMatcher[] = query.keywords.map((keyword) =>
    compileQuery({ ...base, keywords: [keyword] }),
  );
  return (item) => matchers.some((matcher) => matcher.matches(item));
}
