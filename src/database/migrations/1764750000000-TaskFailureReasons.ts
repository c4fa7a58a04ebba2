import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tasks that failed before dataset file names had a length bound (src/modules/tasks/
 * dataset-path.ts): an id too long percent-encoded for a file name failed every compile with
 * ENAMETOOLONG. Their items are still stored, so they go back to `compiling` with their attempts
 * reset, and the next compile writes their datasets. And every stored `failure_reason`, which
 * any key reads, loses the directories of the paths it quotes (`open '/srv/data/datasets/x'` →
 * `open 'x'`), as new reasons do.
 */
export class TaskFailureReasons1764750000000 implements MigrationInterface {
  name = 'TaskFailureReasons1764750000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE scraping_tasks SET state = 'compiling', compile_attempts = 0
      WHERE state = 'failed' AND failure_reason LIKE 'ENAMETOOLONG:%'`);
    await queryRunner.query(`
      UPDATE scraping_tasks
      SET failure_reason = regexp_replace(failure_reason, '''(?:[^''/]*/)+([^''/]*)''', '''\\1''', 'g')
      WHERE failure_reason LIKE '%/%'`);
  }

  /** Nothing to undo: the paths are gone, and a task compiled again keeps its dataset. */
  async down(): Promise<void> {}
}
