import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { datasetPath, datasetsDirectory } from '../../src/modules/tasks/dataset-path';
import { compileFixture, insertExpiredTask, lifecycleReplica } from '../support/expired-tasks';

const T0 = Date.parse('2026-11-20T00:00:00Z');

/**
 * A compile that finds a complete dataset of its task where it writes: a fixture.database restored from
 * a dump older than the datasets' backup (the task back to `active`, fewer items), or another
 * deployment's on a shared DATA_DIR. It renamed over it without a word, and the complete
 * dataset's rows were lost (a restore audit: 695 rows replaced by 298).
 */
describe('A compile over a complete dataset no task records', () => {
  const fixture = compileFixture('taskcompilerestored');

  const replica = () =>
    lifecycleReplica(fixture.database, fixture.dataDir, () => new Date(T0 + 60_000));
  const filesOnDisk = () => readdirSync(datasetsDirectory(fixture.dataDir)).sort();

  it('sets the complete dataset aside, and says where, before writing its own', async () => {
    await insertExpiredTask(fixture.database, 'restored', T0, 300, 1000);
    expect(await replica().service.compileExpired()).toBe(1);
    const complete = readFileSync(datasetPath(fixture.dataDir, 'restored'));

    // The fixture.database as an older dump has it: the task not completed, fewer items.
    await fixture.database.query('DELETE FROM scraping_tasks');
    await insertExpiredTask(fixture.database, 'restored', T0, 120, 1000);
    expect(await replica().service.compileExpired()).toBe(1);

    const aside = filesOnDisk().filter((name) => name.includes('.replaced-'));
    expect(
      aside.map((name) => name.replace(/\.replaced-\d{8}T\d{6}Z-[0-9a-f]{8}$/, '')).sort(),
    ).toEqual(['restored.jsonl.gz', 'restored.jsonl.gz.manifest.json', 'restored.parquet']);
    const keptJsonl = aside.find((name) => name.startsWith('restored.jsonl.gz.replaced-'))!;
    expect(readFileSync(join(datasetsDirectory(fixture.dataDir), keptJsonl))).toEqual(complete);
    expect(readFileSync(datasetPath(fixture.dataDir, 'restored'))).not.toEqual(complete);
    expect(Logger.prototype.warn).toHaveBeenCalledWith(
      { task_id: 'restored' },
      expect.stringContaining('task restored: a complete dataset of it (300 rows) was at'),
    );
  });

  // An earlier attempt's complete dataset never recorded (killed before `completed`), or another
  // replica's: set aside, then found the same bytes as the new one, and removed (a review: the
  // copies stayed for good beside a warning to put them back).
  it('removes what it set aside once its own dataset turns out the same bytes', async () => {
    await insertExpiredTask(fixture.database, 'again', T0, 300, 1000);
    expect(await replica().service.compileExpired()).toBe(1);
    await fixture.database.query('DELETE FROM scraping_tasks');
    await insertExpiredTask(fixture.database, 'again', T0, 300, 1000);
    expect(await replica().service.compileExpired()).toBe(1);
    expect(filesOnDisk()).toEqual([
      'again.jsonl.gz',
      'again.jsonl.gz.manifest.json',
      'again.parquet',
    ]);
    expect(Logger.prototype.log).toHaveBeenCalledWith(
      { task_id: 'again' },
      'task again: the dataset set aside before this compile held the same bytes: removed',
    );
  });

  // A crashed attempt's file, or one no manifest vouches for, is written over as before.
  it('writes over a file at its path that no manifest of the task vouches for', async () => {
    await insertExpiredTask(fixture.database, 'leftover', T0, 120, 1000);
    mkdirSync(datasetsDirectory(fixture.dataDir), { recursive: true });
    writeFileSync(datasetPath(fixture.dataDir, 'leftover'), 'a crashed attempt');
    expect(await replica().service.compileExpired()).toBe(1);
    expect(filesOnDisk()).toEqual([
      'leftover.jsonl.gz',
      'leftover.jsonl.gz.manifest.json',
      'leftover.parquet',
    ]);
  });
});
