import { timeBucketId } from '../protocol';
import { StoredItemQuery } from './item-store';
import { dayOfBucket } from './item-partitions.repository';

export interface SqlStatement {
  sql: string;
  parameters: unknown[];
}

/** A row of the page query: the stored item, its keys, and whether a newer row hides it. */
export interface PageRow {
  item: unknown;
  content_bytes: number;
  delivered_by: string[];
  last_fetched_at: Date;
  datetime: Date;
  uri: string;
  hidden: boolean;
}

/**
 * The SQL of one page of ItemStore.find (`limit` rows at most, newest first, strictly before
 * `query.before`). The page is the head of an index range, never a sort of all that matches:
 * - the query is split into branches, one per label (or per author when usernames are given,
 *   authors having far fewer items than a hot label), each an equality on the leading column of
 *   an index in the page's order (`stored_items_label`, `_username`; `_time` without either), so
 *   a branch reads at most `limit` rows per partition, merged in order;
 * - the time bounds also bound `time_bucket`, so only the days in range are planned at all:
 *   to whole days (partition bounds), so that inside a partition the bound holds for every row
 *   and the planner does not count the time range twice (it then thought an hour held a few
 *   rows and read and sorted all of them instead of the head of the index);
 * - paging is a keyset on (datetime, uri), inside the index order.
 * A uri stored in several rows (miners disagreeing on its time, or filing it under different
 * labels) must come back once: from its newest row among those the query matches. Such a newer
 * row sorts before the older one, so the caller, reading pages in order, drops a uri it has
 * already seen; only rows at or above the caller's own cursor (`seenFrom`: returned by earlier
 * calls) cannot be seen that way, and each row of the page says whether one of those hides it
 * (`hidden`), probing the key of the partitions (source, uri first) from the cursor's day on.
 * Rows of one uri at the same time sort as one: the keyset passes them together. Without a
 * cursor (a first page) there is no probe.
 */
export function findPageSql(
  query: StoredItemQuery,
  seenFrom: StoredItemQuery['before'],
): SqlStatement {
  const parameters: unknown[] = [];
  const parameter = (value: unknown, cast: string) => {
    parameters.push(value);
    return `$${parameters.length}::${cast}`;
  };
  const source = parameter(query.source, 'smallint');
  const to = parameter(query.to.toISOString(), 'timestamptz');

  const named = [...new Set(query.labels?.filter((label): label is string => label !== null))];
  const withNull = query.labels?.includes(null) ?? false;
  const usernames = [...new Set(query.usernames)];
  // Postgres refuses a parameter no clause uses (it cannot tell its type): made on first use.
  const once = (make: () => string) => {
    let made: string | undefined;
    return () => (made ??= make());
  };
  const labelsParameter = once(() => parameter(named, 'text[]'));
  const usernamesParameter = once(() => parameter(usernames, 'text[]'));
  const labelFilter = (alias: string) => {
    const anyNamed = `${alias}.label = ANY(${labelsParameter()})`;
    return withNull ? `(${anyNamed} OR ${alias}.label IS NULL)` : anyNamed;
  };

  const toDay = parameter(dayEnd(timeBucketId(query.to)), 'integer');
  const bounds = [`s.source = ${source}`, `s.datetime <= ${to}`, `s.time_bucket < ${toDay}`];
  if (query.from) {
    bounds.push(`s.datetime >= ${parameter(query.from.toISOString(), 'timestamptz')}`);
    bounds.push(`s.time_bucket >= ${parameter(dayStart(timeBucketId(query.from)), 'integer')}`);
  }
  if (query.before) {
    const datetime = parameter(query.before.datetime.toISOString(), 'timestamptz');
    const uri = parameter(query.before.uri, 'text');
    bounds.push(`(s.datetime, s.uri) < (${datetime}, ${uri})`);
    bounds.push(
      `s.time_bucket < ${parameter(dayEnd(timeBucketId(query.before.datetime)), 'integer')}`,
    );
  }
  const limit = parameter(query.limit, 'integer');

  // A branch's equality replaces the filter on its column: stating both would make the planner
  // count the condition twice and underestimate the rows. A branch of one label holds a uri
  // once at a time; any other may hold its copies under several labels at one time (X items
  // are dated to their id's second, so copies tie), sorted the best corroborated first (by
  // operators, COPIES), then the first stored, which the caller keeps (a hostile-miner audit's
  // finding: the index's order answered a hijacker's rewritten copy in place of the honest one
  // for half the posts). The merge of branches keeps one row per (time, uri) (DISTINCT ON, over the few
  // rows the branches return), so that copies take no page's places there; in a branch it
  // cost a read of any label 0.8 → 5.8 ms (p50), and the caller's bound on rows read is the
  // guard there (ROWS_READ_PER_ITEM).
  // A lone branch of one label has no copies to order (and skips counting them: +1 ms p50 for
  // the hot label's page).
  const alone = usernames.length === 0 && named.length + (withNull ? 1 : 0) === 1;
  const branch = (equality: string[], oneLabel = false) => `SELECT s.item,
           s.content_bytes, s.delivered_by, s.last_fetched_at, s.datetime, s.uri, s.time_bucket,
           ${alone ? 'NULL::bigint' : COPIES} AS copies, s.first_fetched_at
    FROM stored_items s
    WHERE ${[...equality, ...bounds].join(' AND ')}
    ORDER BY s.datetime DESC, s.uri DESC${oneLabel ? '' : `, ${TIE_BREAK('')}`} LIMIT ${limit}`;
  let branches: string[];
  if (usernames.length > 0)
    branches = usernames.map((username) =>
      branch([
        `s.username = ${parameter(username, 'text')}`,
        ...(query.labels ? [labelFilter('s')] : []),
      ]),
    );
  else if (query.labels)
    branches = [
      ...named.map((label) => branch([`s.label = ${parameter(label, 'text')}`], true)),
      ...(withNull ? [branch(['s.label IS NULL'], true)] : []),
    ];
  else branches = [branch([])];
  const page =
    branches.length === 1
      ? branches[0]
      : `SELECT DISTINCT ON (datetime, uri) *
         FROM (${branches.map((sql) => `(${sql})`).join(' UNION ALL ')}) AS b
         ORDER BY datetime DESC, uri DESC, ${TIE_BREAK('')} LIMIT ${limit}`;

  let hidden = 'false';
  if (seenFrom) {
    const datetime = parameter(seenFrom.datetime.toISOString(), 'timestamptz');
    const uri = parameter(seenFrom.uri, 'text');
    const newer = [
      'n.source = p.source_id',
      'n.uri = p.uri',
      'n.datetime > p.datetime',
      `n.time_bucket >= ${parameter(timeBucketId(seenFrom.datetime), 'integer')}`,
      `n.time_bucket < ${toDay}`,
      `(n.datetime, n.uri) >= (${datetime}, ${uri})`,
      `n.datetime <= ${to}`,
      ...(query.labels ? [labelFilter('n')] : []),
      ...(usernames.length > 0 ? [`n.username = ANY(${usernamesParameter()})`] : []),
    ];
    hidden = `EXISTS (SELECT FROM stored_items n WHERE ${newer.join(' AND ')})`;
  }
  const sql = `SELECT p.item, p.content_bytes, p.delivered_by, p.last_fetched_at, p.datetime, p.uri,
         ${hidden} AS hidden
    FROM (SELECT ${source} AS source_id, page.* FROM (${page}) AS page) AS p
    ORDER BY p.datetime DESC, p.uri DESC, ${TIE_BREAK('p.')}`;
  return { sql, parameters };
}

/**
 * The order of a uri's copies at one time: the most operators that sent it, then the first, by
 * the output columns every branch selects (bare, a branch's ORDER BY reads them as its output's).
 */
const TIE_BREAK = (alias: string) => `${alias}copies DESC, ${alias}first_fetched_at`;

/**
 * How many operators sent a row's copy: the distinct coldkeys of its miners, as live
 * corroboration counts them (answer-checks.ts), so that one operator's hotkeys filing a
 * rewritten copy under another label do not outnumber two honest operators. A hotkey no longer
 * in the metagraph counts as an operator of its own.
 */
const COPIES = `CASE WHEN cardinality(s.delivered_by) < 2 THEN cardinality(s.delivered_by)
             ELSE (SELECT count(DISTINCT coalesce(
                     (SELECT m.coldkey FROM miners m WHERE m.hotkey = h.hotkey), h.hotkey))
                   FROM unnest(s.delivered_by) AS h(hotkey)) END`;

/** The first hour of `timeBucket`'s day, and the first of the next: a partition's bounds. */
function dayStart(timeBucket: number): number {
  return dayOfBucket(timeBucket) * 24;
}

function dayEnd(timeBucket: number): number {
  return dayStart(timeBucket) + 24;
}
