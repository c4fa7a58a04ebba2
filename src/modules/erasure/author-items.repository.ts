import { DataSource } from 'typeorm';
import { isLockTimeout, setLockTimeout } from '../../database/lock-timeout';
import { returningRows } from '../../database/returning-rows';
import { toSourceId, toSourceName } from '../../network/sources';
import { ErasedAuthor, isAuthorName } from './erased-author';

/** An author in the erased-authors register: since when, and whether this run added them. */
export interface RegisteredAuthor {
  erasedAt: Date;
  added: boolean;
}

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

  /**
   * Records the author in the erased-authors register (`erased_authors`), in a statement of its
   * own, committed when it returns: from then on the item store's and the tasks' inserts and
   * on-demand answers leave the author out (src/network/erased-authors.ts). Answers when the
   * author was registered, and whether by this call: a run again keeps the first time.
   */
  async register(author: ErasedAuthor): Promise<RegisteredAuthor> {
    const [row] = await this.dataSource.query<{ erased_at: Date; added: boolean }[]>(
      `WITH added AS (
         INSERT INTO erased_authors (source, author, erased_at) VALUES ($1, $2, now())
         ON CONFLICT (source, author) DO NOTHING RETURNING erased_at)
       SELECT erased_at, true AS added FROM added
       UNION ALL
       SELECT erased_at, false FROM erased_authors WHERE source = $1 AND author = $2`,
      [toSourceId(author.source), author.username],
    );
    if (row) return { erasedAt: row.erased_at, added: row.added };
    // Another run registered the author as this one did, and committed after this statement
    // began: its row is there now.
    return { erasedAt: (await this.registered(author))!, added: false };
  }

  /**
   * Waits for the writers of the item store and the tasks' items already under way as the author
   * was registered to finish: a barrier, a lock taken and let go at once. An insert holds its
   * table's ROW EXCLUSIVE lock from its start to its transaction's end, which may be long after its
   * statement read the register (a collection's insert waits on its task row's update), and its
   * rows are unseen by a delete until then (a review showed one left behind). SHARE conflicts with
   * that lock, not with readers' ACCESS SHARE, so no long read is waited for; a writer queued
   * behind it takes its snapshot once it runs, and sees the register. False when `lockTimeoutMs`
   * passed first (SQLSTATE 55P03): a writer is still busy.
   */
  async awaitWriters(lockTimeoutMs: number): Promise<boolean> {
    try {
      // One table at a time, each lock let go before the next is asked for: held together, a
      // writer of both (holding one, asking for the other) would deadlock with the barrier.
      for (const table of ['stored_items', 'task_items'])
        await this.dataSource.transaction(async (manager) => {
          await setLockTimeout(manager, lockTimeoutMs);
          await manager.query(`LOCK TABLE ${table} IN SHARE MODE`);
        });
      return true;
    } catch (error) {
      if (isLockTimeout(error)) return false;
      throw error;
    }
  }

  /** When the author was registered (register), or null: what a dry run says. */
  async registered(author: ErasedAuthor): Promise<Date | null> {
    const [row] = await this.dataSource.query<{ erased_at: Date }[]>(
      'SELECT erased_at FROM erased_authors WHERE source = $1 AND author = $2',
      [toSourceId(author.source), author.username],
    );
    return row?.erased_at ?? null;
  }

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
   * The author's task items, by the rule the service reads authors by (isAuthorName, authorKey):
   * SQL finds the candidates and the rule decides among them. Two rules, one in SQL and one in
   * code, had disagreed on names with a tab or two `@` (a review). A candidate is a name that is
   * the author's lower-cased, with nothing but other characters than a name's around it (blanks,
   * `@`), or any name with a character beyond ASCII: `lower()` lowers ASCII only under `C`,
   * where JavaScript lowers the Kelvin sign to `k` (the second review). `C` whatever the
   * database's collation: under a Turkish one `lower('IrinaK')` is `ırınak`, which no pattern
   * of `irinak` matched, and the name, all ASCII, was no candidate either (a collation audit).
   * The author's name holds nothing a pattern reads specially (`[a-z0-9_-]`, erasedAuthor).
   * Only the name is read, not the posts.
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
       WHERE lower(name COLLATE "C") ~ ('^[^a-z0-9_-]*' || $2 || '[^a-z0-9_-]*$')
         OR name ~ '[^\\x01-\\x7f]'`,
      [source, author.username],
    );
    return candidates.filter(({ name }) => isAuthorName(author, name));
  }
}

/** How many of `items` each task has. */
function countByTask(items: readonly { task_id: string }[]): TaskItemCounts {
  const counts: TaskItemCounts = new Map();
  for (const { task_id } of items) counts.set(task_id, (counts.get(task_id) ?? 0) + 1);
  return counts;
}
