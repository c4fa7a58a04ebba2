import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { JobRunner } from '../../src/common/jobs/job-runner';
import { AppConfig } from '../../src/config/app-config';
import { NetworkService } from '../../src/network/network.service';
import { DatasetParquetService } from '../../src/modules/tasks/dataset-parquet.service';
import { datasetsDirectory } from '../../src/modules/tasks/dataset-path';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { redditComment } from '../support/items';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

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
  let medium: MediumDatabase;
  let database: DataSource;
  let dataDir: string;

  /** A replica's lifecycle service on DATA_DIR `dataDir`, with its repository. */
  const replica = () => {
    const repository = new TaskLifecycleRepository(database);
    const clock = { now: () => new Date(T0 + 60_000) } as Clock;
    const config = {
      dataDir,
      tasks: { tickMs: 60_000, maxCompileAttempts: 3, collectIntervalMs: 3_600_000 },
    } as AppConfig;
    const service = new TaskLifecycleService(
      repository,
      {} as NetworkService,
      {} as JobRunner,
      clock,
      config,
      new DatasetParquetService(repository, clock, config),
    );
    return { repository, service };
  };

  /** An expired Reddit task with ITEMS stored items, collected up to its expiry. */
  const expiredTask = async (id: string) => {
    await database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, collect_head)
       VALUES ($1, 'reddit', 'r/bitcoin', 'active', '5Hotkey', $2::timestamptz - interval '7 days', $2, $2)`,
      [id, new Date(T0).toISOString()],
    );
    const items = Array.from({ length: ITEMS }, (_, n) => {
      const datetime = new Date(T0 - (n + 1) * 1000).toISOString();
      const uri = `https://www.reddit.com/r/bitcoin/comments/abc/title/${id}${n}/`;
      return redditComment({ uri, url: uri, id: `t1_${id}${n}`, datetime, createdAt: datetime });
    });
    await database.query(
      `INSERT INTO task_items (task_id, uri, datetime, item, collected_at)
       SELECT $1, uri, datetime, item, datetime
       FROM unnest($2::text[], $3::timestamptz[], $4::jsonb[]) AS i(uri, datetime, item)`,
      [
        id,
        items.map((item) => item.uri),
        items.map((item) => item.datetime),
        items.map((item) => JSON.stringify(item)),
      ],
    );
  };

  const recorded = async (id: string) =>
    (
      await database.query<
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
  const filesOnDisk = () => readdirSync(datasetsDirectory(dataDir)).sort();

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

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskcompileshutdown' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'task-compile-shutdown-'));
    for (const level of ['log', 'warn', 'error'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
    await database.query('DELETE FROM scraping_tasks');
  });

  it('reads no further page once the service is stopping, and writes no file', async () => {
    await expiredTask('paging');
    const { repository, service } = replica();
    const itemsPage = repository.itemsPage.bind(repository);
    const pages = jest.spyOn(repository, 'itemsPage').mockImplementationOnce((...page) => {
      service.onModuleDestroy();
      return itemsPage(...page);
    });

    await service.compileExpired();

    expect(pages).toHaveBeenCalledTimes(1);
    // Not even a partial file: the next compile starts from scratch.
    expect(filesOnDisk()).toEqual([]);
    expect(Logger.prototype.log).toHaveBeenCalledWith(
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
    const isCompiling = repository.isCompiling.bind(repository);
    // Asked just before the JSON lines file is renamed into place.
    jest.spyOn(repository, 'isCompiling').mockImplementationOnce((id) => {
      service.onModuleDestroy();
      return isCompiling(id);
    });

    await service.compileExpired();

    // What a restart would find too had it been killed there: the next compile writes it again.
    expect(filesOnDisk()).toEqual(['converting.jsonl.gz']);
    await expectCompiledAfterRestart('converting');
  });
});
