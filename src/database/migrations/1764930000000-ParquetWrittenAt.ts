import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the recorded Parquet file was written: the dataset download's `Last-Modified` for
 * `format=parquet` (docs/decisions.md, "Scraping task lifecycle"). A Parquet file written at a
 * compile was written at `completed_at`, but one written at a download (a task completed before
 * Parquet existed, a file gone from the disk, an earlier writer's) was written later, and no
 * column said when. Files recorded before this migration get its time, not `completed_at`: one
 * of them may have been written again after a client fetched it, and a later date only costs a
 * client a 200 where a 304 would have done, never a 304 for a file it does not hold. A nullable
 * column: a release before it ignores it, so a rolling upgrade works. A null date is read as
 * `completed_at`: such a release left it null at a compile, or at a download that wrote the
 * task's first Parquet file, where no client holds other bytes of it. One such release writing
 * other bytes over a recorded file leaves the date as it was: until every replica runs this
 * release, a client revalidating by date alone may be answered 304 for them (by `ETag`, never).
 */
export class ParquetWrittenAt1764930000000 implements MigrationInterface {
  name = 'ParquetWrittenAt1764930000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks ADD COLUMN parquet_written_at timestamptz');
    await queryRunner.query(
      'UPDATE scraping_tasks SET parquet_written_at = now() WHERE parquet_file IS NOT NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks DROP COLUMN parquet_written_at');
  }
}
