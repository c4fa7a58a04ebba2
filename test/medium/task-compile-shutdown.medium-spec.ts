import { readdirSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { DatasetParquetService } from '../../src/modules/tasks/dataset-parquet.service';
import { datasetsDirectory } from '../../src/modules/tasks/dataset-path';
import { compileFixture, insertExpiredTask, lifecycleReplica } from '../support/expired-tasks';

const T0 = Date.parse('2026-11-20T00:00:00Z');
// Three pages of the compile's 1000.
const ITEMS = 2500;

/**
 * A compile under way when the service is told to stop. Nothing in it looked: a full task's
 * compile outlasted docker-compose's 30 s grace period, was killed and started again from
 * scratch after the restart (an audit's finding). It is now given up between pages and while
 * the Parquet file is written, the task left `compiling` with no failure counted, and compiled
 * whole after the restart.
 */
describe('A compile at shutdown', () => {
  const fixture = compileFixture('taskcompileshutdown');

  const replica = () =>
    lifecycleReplica(fixture.database, fixture.dataDir, () => new Date(T0 + 60_000));
  /** An expired Reddit task with ITEMS stored items, collected up to its expiry. */
  const expiredTask = (id: string) => insertExpiredTask(fixture.database, id, T0, ITEMS, 1000);

  const recorded = async (id: string) =>
    (
      await fixture.database.query<
        {
          state: string;
          compile_attempts: number;
          failure_reason: string | null;
          dataset_rows: number | null;
          parquet_file: string | null;
        }[]
      >(
        `SELECT state, compile_attempts, failure_reason, dataset_rows, parquet_file
         FROM scraping_tasks WHERE id = $1`,
        [id],
      )
    )[0];
  const filesOnDisk = () => readdirSync(datasetsDirectory(fixture.dataDir)).sort();

  /** Left `compiling` as it was, no failure counted; after a restart, compiled whole. */
  const expectCompiledAfterRestart = async (id: string) => {
    expect(await recorded(id)).toEqual({
      state: 'compiling',
      compile_attempts: 0,
      failure_reason: null,
      dataset_rows: null,
      parquet_file: null,
    });
    expect(Logger.prototype.error).not.toHaveBeenCalled();

    expect(await replica().service.compileExpired()).toBe(1);
    expect(await recorded(id)).toMatchObject({
      state: 'completed',
      compile_attempts: 0,
      dataset_rows: ITEMS,
      parquet_file: expect.any(String),
    });
    expect(filesOnDisk()).toEqual([
      `${id}.jsonl.gz`,
      `${id}.jsonl.gz.manifest.json`,
      `${id}.parquet`,
    ]);
  };

  it('reads no further page once the service is stopping, and writes no file', async () => {
    await expiredTask('paging');
    const { repository, service } = replica();
    const itemsPage = repository.itemsPage.bind(repository);
    const pages = jest.spyOn(repository, 'itemsPage').mockImplementationOnce((...page) => {
      service.onModuleDestroy();
      return itemsPage(...page);
    });

    // Given up, not completed: the pass counts no compile.
    expect(await service.compileExpired()).toBe(0);

    expect(pages).toHaveBeenCalledTimes(1);
    // Not even a partial file: the next compile starts from scratch.
    expect(filesOnDisk()).toEqual([]);
    expect(Logger.prototype.log).toHaveBeenCalledWith(
      { task_id: 'paging' },
      'task paging: compile given up at shutdown; the task stays compiling, compiled again at the next pass',
    );
    await expectCompiledAfterRestart('paging');
  });

  // The JSON lines file is renamed into place; the stop comes as the Parquet file is written. A
  // compile that completed the task without it would have sent every Parquet download to convert
  // the whole file.
  it('gives up writing the Parquet file once the service is stopping, and does not complete the task without it', async () => {
    await expiredTask('converting');
    const { repository, service } = replica();
    const lockTask = repository.lockTask.bind(repository);
    // The second lock, taken just before the JSON lines file is renamed into place (the first
    // looks for a complete dataset at the path: keepCompleteDataset).
    let locks = 0;
    jest.spyOn(repository, 'lockTask').mockImplementation((id, work) => {
      if (++locks === 2) service.onModuleDestroy();
      return lockTask(id, work);
    });

    await service.compileExpired();

    // What a restart would find too had it been killed there: the next compile writes it again.
    expect(filesOnDisk()).toEqual(['converting.jsonl.gz']);
    await expectCompiledAfterRestart('converting');
  });

  // The JSON lines file a stopped compile left stays for the next compile to rename over: when
  // none does, the task failing for good, it stayed beside a task answered 410 for good.
  it('leaves no file behind a task that fails for good, not even one a compile given up at shutdown left', async () => {
    await expiredTask('stopped');
    const { service } = replica();
    const tryWrite = DatasetParquetService.prototype.tryWrite;
    jest.spyOn(DatasetParquetService.prototype, 'tryWrite').mockImplementationOnce(function (
      this: DatasetParquetService,
      ...args
    ) {
      service.onModuleDestroy();
      return tryWrite.apply(this, args);
    });
    const stopped = await service.compileExpired();
    expect(filesOnDisk()).toEqual(['stopped.jsonl.gz']);

    // The last attempt allowed fails before it renames a file.
    await fixture.database.query(
      `UPDATE scraping_tasks SET compile_attempts = 2 WHERE id = 'stopped'`,
    );
    const last = replica();
    jest.spyOn(last.repository, 'itemsPage').mockRejectedValue(new Error('EIO: i/o error'));
    const failed = await last.service.compileExpired();

    expect(await recorded('stopped')).toMatchObject({ state: 'failed', compile_attempts: 3 });
    expect(filesOnDisk()).toEqual([]);
    expect({ stopped, failed }).toEqual({ stopped: 0, failed: 0 });
  });
});
