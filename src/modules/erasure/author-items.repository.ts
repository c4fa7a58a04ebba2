import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { returningRows } from '../../database/returning-rows';
import { toSourceId, toSourceName } from '../../network/sources';
import { ErasedAuthor } from './erased-author';

/** An author's items in one task (task_items), by task id. */
export type TaskItemCounts = Map<string, number>;

/**
 * An author's items in the tables: the item store (`stored_items`, whose `username` holds the
 * author as queries compare it, authorKey) and tasks' collected items (`task_items`, whose
 * item holds the record's own spelling: compared lower-cased, without blanks around it or its
 * leading `@`s). Counted for a dry run, deleted for an erasure.
 */
@Injectable()
export class AuthorItemsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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

  countInTasks(author: ErasedAuthor): Promise<TaskItemCounts> {
    return this.byTask(
      `SELECT task_id, count(*)::int AS items FROM task_items WHERE ${taskItemOf('$1', '$2')}
       GROUP BY task_id`,
      author,
    );
  }

  deleteInTasks(author: ErasedAuthor): Promise<TaskItemCounts> {
    return this.byTask(
      `WITH deleted AS (DELETE FROM task_items WHERE ${taskItemOf('$1', '$2')} RETURNING task_id)
       SELECT task_id, count(*)::int AS items FROM deleted GROUP BY task_id`,
      author,
    );
  }

  private async byTask(sql: string, author: ErasedAuthor): Promise<TaskItemCounts> {
    const rows = returningRows<{ task_id: string; items: number }>(
      await this.dataSource.query(sql, [toSourceName(author.source), author.username]),
    );
    return new Map(rows.map((row) => [row.task_id, row.items]));
  }
}

/**
 * A task item of the author `username` of source `source` (its name, 'X' or 'REDDIT'), SQL over
 * those two parameters: X keeps the author under `user`.
 */
function taskItemOf(source: string, username: string): string {
  return `item->>'source' = ${source} AND lower(ltrim(btrim(CASE item->>'source'
    WHEN 'X' THEN item->'user'->>'username' ELSE item->>'username' END), '@')) = ${username}`;
}
