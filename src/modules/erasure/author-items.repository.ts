import { DataSource } from 'typeorm';
import { returningRows } from '../../database/returning-rows';
import { toSourceId, toSourceName } from '../../network/sources';
import { ErasedAuthor, isAuthorOf } from './erased-author';

/** An author's items in one task (task_items), by task id. */
export type TaskItemCounts = Map<string, number>;

/**
 * An author's items in the tables: the item store (`stored_items`, whose `username` holds the
 * author as queries compare it, authorKey) and tasks' collected items (`task_items`, whose
 * item holds the record's own spelling, read by the same rule). Counted for a dry run, deleted
 * for an erasure. Built by the command on its own DataSource: no module of the service provides
 * it.
 */
export class AuthorItemsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async countStored(author: ErasedAuthor): Promise<number> {
    const [{ items }] = await this.dataSource.query<{ items: number }[]>(
      'SELECT count(*)::int AS items FROM stored_items WHERE source = $1 AND username = $2',
      [toSourceId(author.source), author.username],
    );
    return items;
  }

  async deleteStored(author: ErasedAuthor): Promise<number> {
    const [{ items }] = await this.dataSource.query<{ items: number }[]>(
      `WITH deleted AS (
         DELETE FROM stored_items WHERE source = $1 AND username = $2 RETURNING 1)
       SELECT count(*)::int AS items FROM deleted`,
      [toSourceId(author.source), author.username],
    );
    return items;
  }

  async countInTasks(author: ErasedAuthor): Promise<TaskItemCounts> {
    return countByTask(await this.itemsInTasks(author));
  }

  /**
   * Deletes the author's task items, found as itemsInTasks finds them, by their keys. An item
   * collected again meanwhile under the same key is the same post, the author's too.
   */
  async deleteInTasks(author: ErasedAuthor): Promise<TaskItemCounts> {
    const found = await this.itemsInTasks(author);
    const rows = returningRows<{ task_id: string }>(
      await this.dataSource.query(
        `DELETE FROM task_items WHERE (task_id, uri) IN (
           SELECT * FROM unnest($1::varchar[], $2::text[])) RETURNING task_id`,
        [found.map((item) => item.task_id), found.map((item) => item.uri)],
      ),
    );
    return countByTask(rows);
  }

  /**
   * The author's task items, by the rule the service reads authors by (isAuthorOf, authorKey):
   * SQL finds those whose name, lower-cased, holds the author's (every item of the author's
   * does, but for a name whose letters only JavaScript lowers to ASCII, as the Kelvin sign), and
   * the rule decides among them. Two rules, one in SQL and one in code, had disagreed on
   * names with a tab or two `@` (a review). Only the name is read, not the posts.
   */
  private async itemsInTasks(author: ErasedAuthor): Promise<{ task_id: string; uri: string }[]> {
    const source = toSourceName(author.source);
    const candidates = await this.dataSource.query<
      { task_id: string; uri: string; name: string }[]
    >(
      `SELECT task_id, uri, name FROM (
         SELECT task_id, uri, CASE item->>'source' WHEN 'X' THEN item->'user'->>'username'
           ELSE item->>'username' END AS name
         FROM task_items WHERE item->>'source' = $1) AS named
       WHERE strpos(lower(name), $2) > 0`,
      [source, author.username],
    );
    const isErased = isAuthorOf(author);
    return candidates.filter(({ name }) =>
      isErased(source === 'X' ? { source, user: { username: name } } : { source, username: name }),
    );
  }
}

/** How many of `items` each task has. */
function countByTask(items: readonly { task_id: string }[]): TaskItemCounts {
  const counts: TaskItemCounts = new Map();
  for (const { task_id } of items) counts.set(task_id, (counts.get(task_id) ?? 0) + 1);
  return counts;
}
