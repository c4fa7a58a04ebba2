import { MigrationInterface, QueryRunner } from 'typeorm';

export class RepoNames1763800000000 implements MigrationInterface {
  name = 'RepoNames1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // COLLATE "C" orders by code point (byte order of UTF-8), as Python's sorted() does.
    await queryRunner.query(`CREATE TABLE repo_names (name text COLLATE "C" PRIMARY KEY)`);
    // One row: which file the names in repo_names came from. Without it (or for another file)
    // there has never been a good ingest for the configured file.
    await queryRunner.query(`
      CREATE TABLE repo_names_ingest (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        source text NOT NULL,
        name_count integer NOT NULL,
        ingested_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE repo_names_ingest');
    await queryRunner.query('DROP TABLE repo_names');
  }
}
