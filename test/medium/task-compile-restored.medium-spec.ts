import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { datasetPath, datasetsDirectory } from '../../src/modules/tasks/dataset-path';
import { insertExpiredTask, lifecycleReplica } from '../support/expired-tasks';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const T0 = Date.parse('2026-11-20T00:00:00Z');

/**
 * A compile that finds a complete dataset of its task where it writes: a database restored from
 * a dump older than the datasets' backup (the task back to `active`, fewer items), or another
 * deployment's on a shared DATA_DIR. It renamed over it without a word, and the complete
 * dataset's rows were lost (a restore audit: 695 rows replaced by 298).
 */
describe('A compile over a complete dataset no task records', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let dataDir: string;

  const replica = () => lifecycleReplica(database, dataDir, () => new Date(T0 + 60_000));
  const filesOnDisk = () => readdirSync(datasetsDirectory(dataDir)).sort();

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskcompilerestored' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'task-compile-restored-'));
    for (const level of ['log', 'warn', 'error'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
    await database.query('DELETE FROM scraping_tasks');
  });

  it('sets the complete dataset aside, and says where, before writing its own', async () => {
    await insertExpiredTask(database, 'restored', T0, 300, 1000);
    expect(await replica().service.compileExpired()).toBe(1);
    const complete = readFileSync(datasetPath(dataDir, 'restored'));

    // The database as an older dump has it: the task not completed, fewer items.
    await database.query('DELETE FROM scraping_tasks');
    await insertExpiredTask(database, 'restored', T0, 120, 1000);
    expect(await replica().service.compileExpired()).toBe(1);

    const aside = filesOnDisk().filter((name) => name.includes('.replaced-'));
    expect(aside.map((name) => name.replace(/\.replaced-\d{8}T\d{6}Z$/, '')).sort()).toEqual([
      'restored.jsonl.gz',
      'restored.jsonl.gz.manifest.json',
      'restored.parquet',
    ]);
    const keptJsonl = aside.find((name) => name.startsWith('restored.jsonl.gz.replaced-'))!;
    expect(readFileSync(join(datasetsDirectory(dataDir), keptJsonl))).toEqual(complete);
    expect(readFileSync(datasetPath(dataDir, 'restored'))).not.toEqual(complete);
    expect(Logger.prototype.warn).toHaveBeenCalledWith(
      { task_id: 'restored' },
      expect.stringContaining('task restored: a complete dataset of it (300 rows) was at'),
    );
  });

  // A crashed attempt's file, or one no manifest vouches for, is written over as before.
  it('writes over a file at its path that no manifest of the task vouches for', async () => {
    await insertExpiredTask(database, 'leftover', T0, 120, 1000);
    mkdirSync(datasetsDirectory(dataDir), { recursive: true });
    writeFileSync(datasetPath(dataDir, 'leftover'), 'a crashed attempt');
    expect(await replica().service.compileExpired()).toBe(1);
    expect(filesOnDisk()).toEqual([
      'leftover.jsonl.gz',
      'leftover.jsonl.gz.manifest.json',
      'leftover.parquet',
    ]);
  });
});
