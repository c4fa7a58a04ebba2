import { DataItem } from './protocol';
import { sourceOfName, SourceId, toSourceId } from './sources';

/**
 * The erased-authors register (`erased_authors`, migration ErasedAuthors): the authors an
 * erasure took out (`npm run erase-author`, which writes it), kept out from then on by every
 * writer of items and by on-demand answers. Rows are keyed as `stored_items` keys its authors:
 * the source's id and the name as queries compare it (authorKey). The network module reads the
 * table and knows nothing of the erasure module; both share only the table. A contract
 * (NETWORK_PUBLIC): the tasks' insert reads the register by the same keys and SQL; the on-demand
 * read is the network's own (erased-authors.repository.ts).
 */

/** An item's source as the register keys it; undefined for a record of no known source. */
export function sourceIdOfItem(item: DataItem): SourceId | undefined {
  const source = typeof item.source === 'string' ? sourceOfName(item.source) : undefined;
  return source === undefined ? undefined : toSourceId(source);
}

/**
 * SQL that holds when the author `author` (an expression: authorKey's form) of source `source`
 * (an expression: the source's id) is not in the register: for the `WHERE` of an insert's
 * `SELECT`, so that the row is left out by the statement that would write it (no read before
 * the write for an erasure to slip between). Reads the register's primary key.
 */
export function notErasedSql(source: string, author: string): string {
  return `NOT EXISTS (SELECT 1 FROM erased_authors erased
    WHERE erased.source = ${source} AND erased.author = ${author})`;
}
