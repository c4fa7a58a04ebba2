import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the recorded JSON lines dataset file was written: the dataset download's
 * `Last-Modified` for `format=jsonl` (docs/decisions.md, "An author's erasure"). It was
 * `completed_at`, which an author's erasure keeps (`completed_after` polling and the prune pass
 * read it) while it writes the file again without the author's rows: a client revalidating by
 * If-Modified-Since alone was answered 304 and kept the copy holding them. A compile sets it
 * with `completed_at` (the same time); an erasure's rewrite sets it as a new Parquet file sets
 * `parquet_written_at` (rewrittenAtSql: its time, at least the second after the last).
 *
 * Rows recorded before it stay null, read as `completed_at`: until this release, only an
 * erasure wrote a recorded file again, and that command came the same day (2026-12-07). A
 * backfill with the migration's time, as `parquet_written_at` had, would have every client
 * revalidating by date download every dataset again, for the few an erasure may have rewritten;
 * those are named in its summary, and an operator who ran it before this migration can date
 * them (README, "Personal data"). A nullable column: a release before it ignores it, so a
 * rolling upgrade works; that release's compile leaves it null (its `completed_at` is then the
 * file's time, as it is), and its download sends `completed_at` for a rewritten file, as it did.
 */
export class DatasetWrittenAt1765010000000 implements MigrationInterface {
  name = 'DatasetWrittenAt1765010000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks ADD COLUMN dataset_written_at timestamptz');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks DROP COLUMN dataset_written_at');
  }
}
