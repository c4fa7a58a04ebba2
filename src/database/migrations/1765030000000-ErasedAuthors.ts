import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The erased-authors register (docs/decisions.md, "An author's erasure"): one row per author an
 * erasure took out, written by `npm run erase-author` before it deletes anything. The item
 * store's and the tasks' inserts leave out items of a registered author in their own statement
 * (`notErasedSql`), and on-demand answers drop them before they are returned and cached, so an
 * author stays out once erased, whatever miners serve again.
 *
 * `source` is the subnet's id (1 Reddit, 2 X), as `stored_items.source`; `author` is the name as
 * queries compare it (`authorKey`: lower case, without `@` and the blanks around it), as
 * `stored_items.username`. The primary key is the index every insert's `NOT EXISTS` and the
 * on-demand look-up read. A release before it writes without reading the table, as before: the
 * command is run once every replica runs this release (README, "Personal data").
 */
export class ErasedAuthors1765030000000 implements MigrationInterface {
  name = 'ErasedAuthors1765030000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE erased_authors (
         source smallint NOT NULL CHECK (source IN (1, 2)),
         author text NOT NULL,
         erased_at timestamptz NOT NULL,
         PRIMARY KEY (source, author))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE erased_authors');
  }
}
