import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** Names are inserted this many at a time, so a large file never becomes one huge statement. */
const INSERT_BATCH_SIZE = 1000;

@Injectable()
export class ReposRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The stored names, sorted by code point and unique, if they were ingested from `source`;
   * null when the last good ingest was of another file, or there was none.
   */
  async findNamesIngestedFrom(source: string): Promise<string[] | null> {
    const rows = await this.dataSource.query<{ names: string[] }[]>(
      `SELECT ARRAY(SELECT name FROM repo_names ORDER BY name) AS names
       FROM repo_names_ingest WHERE source = $1`,
      [source],
    );
    return rows.length > 0 ? rows[0].names : null;
  }

  /**
   * Replaces every stored name with `names` (duplicates allowed) in one transaction and records
   * `source` as the origin of the list. If `names` throws part-way, nothing changes. Concurrent
   * replacements (other replicas) wait for each other; readers keep seeing the old list meanwhile.
   * Returns how many unique names are stored.
   */
  async replaceNames(source: string, names: AsyncIterable<string>): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('LOCK TABLE repo_names IN EXCLUSIVE MODE');
      await manager.query('DELETE FROM repo_names');
      let batch: string[] = [];
      const flush = async () => {
        await manager.query(
          'INSERT INTO repo_names (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING',
          [batch],
        );
        batch = [];
      };
      for await (const name of names) {
        batch.push(name);
        if (batch.length >= INSERT_BATCH_SIZE) await flush();
      }
      if (batch.length > 0) await flush();
      const [{ count }] = await manager.query<{ count: number }[]>(
        'SELECT count(*)::int AS count FROM repo_names',
      );
      await manager.query(
        `INSERT INTO repo_names_ingest (id, source, name_count, ingested_at) VALUES (1, $1, $2, now())
         ON CONFLICT (id) DO UPDATE SET source = EXCLUDED.source, name_count = EXCLUDED.name_count, ingested_at = now()`,
        [source, count],
      );
      return count;
    });
  }
}
