import { timeBucketId } from '../protocol';
import { StoredItemQuery } from './item-store';

export interface SqlStatement {
  sql: string;
  parameters: unknown[];
}

/**
 * The SQL of ItemStore.find. One page, newest first, is the head of an index range, never a
 * sort of everything that matches:
 * - the query is split into branches, one per label (or per author when usernames are given,
 *   authors being far fewer items than a hot label), each an equality on the leading column of
 *   an index in the page's order (`stored_items_label`, `_username`; `_time` without either),
 *   so each branch reads at most `limit` rows per partition, merged in order;
 * - the time bounds also bound `time_bucket`, so only the days in range are planned at all;
 * - paging is a keyset on (datetime, uri), inside the index order.
 * A uri stored under two hours (miners disagreeing on its time) is returned once: from its
 * newest row among those the query matches. The NOT EXISTS probes the primary key of the
 * partitions between the row's hour and the query's end only (pruned at run time).
 */
export function findItemsSql(query: StoredItemQuery): SqlStatement {
  const parameters: unknown[] = [];
  const parameter = (value: unknown, cast: string) => {
    parameters.push(value);
    return `$${parameters.length}::${cast}`;
  };
  const source = parameter(query.source, 'smallint');
  const to = parameter(query.to.toISOString(), 'timestamptz');
  const toBucket = parameter(timeBucketId(query.to), 'integer');

  const named = [...new Set(query.labels?.filter((label): label is string => label !== null))];
  const withNull = query.labels?.includes(null) ?? false;
  const usernames = [...new Set(query.usernames)];
  const labelsParameter = query.labels && parameter(named, 'text[]');
  const usernamesParameter = usernames.length > 0 && parameter(usernames, 'text[]');

  /** The filters every returned row, and every row that could hide it, must pass. */
  const matches = (alias: string): string[] => {
    const conditions = [`${alias}.source = ${source}`, `${alias}.datetime <= ${to}`];
    if (labelsParameter) {
      const anyNamed = `${alias}.label = ANY(${labelsParameter})`;
      conditions.push(withNull ? `(${anyNamed} OR ${alias}.label IS NULL)` : anyNamed);
    }
    if (usernamesParameter) conditions.push(`${alias}.username = ANY(${usernamesParameter})`);
    return conditions;
  };

  const bounds = [`s.time_bucket <= ${toBucket}`];
  if (query.from) {
    bounds.push(`s.datetime >= ${parameter(query.from.toISOString(), 'timestamptz')}`);
    bounds.push(`s.time_bucket >= ${parameter(timeBucketId(query.from), 'integer')}`);
  }
  if (query.before) {
    const datetime = parameter(query.before.datetime.toISOString(), 'timestamptz');
    const uri = parameter(query.before.uri, 'text');
    bounds.push(`(s.datetime, s.uri) < (${datetime}, ${uri})`);
    bounds.push(`s.time_bucket <= ${parameter(timeBucketId(query.before.datetime), 'integer')}`);
  }
  const newest = `NOT EXISTS (SELECT FROM stored_items n
      WHERE n.source = s.source AND n.uri = s.uri
        AND n.time_bucket > s.time_bucket AND n.time_bucket <= ${toBucket}
        AND ${matches('n').join(' AND ')})`;
  const limit = parameter(query.limit, 'integer');

  const branch = (
    equality: string | undefined,
  ) => `(SELECT s.item, s.content_bytes, s.delivered_by, s.last_fetched_at, s.datetime, s.uri
    FROM stored_items s
    WHERE ${[...(equality ? [equality] : []), ...matches('s'), ...bounds, newest].join('\n      AND ')}
    ORDER BY s.datetime DESC, s.uri DESC LIMIT ${limit})`;

  let branches: string[];
  if (usernamesParameter)
    branches = usernames.map((username) => branch(`s.username = ${parameter(username, 'text')}`));
  else if (query.labels)
    branches = [
      ...named.map((label) => branch(`s.label = ${parameter(label, 'text')}`)),
      ...(withNull ? [branch('s.label IS NULL')] : []),
    ];
  else branches = [branch(undefined)];

  const sql =
    branches.length === 1
      ? branches[0].slice(1, -1)
      : `SELECT * FROM (${branches.join('\n  UNION ALL ')}) AS b
         ORDER BY datetime DESC, uri DESC LIMIT ${limit}`;
  return { sql, parameters };
}
