import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { JobRunner } from '../../src/common/jobs/job-runner';
import { MetricsService } from '../../src/common/metrics/metrics.service';
import { NetworkService } from '../../src/network/network.service';
import { DatasetParquetService } from '../../src/modules/tasks/dataset-parquet.service';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { redditComment } from './items';
import { MediumDatabase, openMediumDatabase } from './medium-database';
import { testConfig } from './test-config';

/**
 * A replica's lifecycle service on DATA_DIR `dataDir` at the time `now()` gives, with its
 * repository: what the compile specs run two of, as two replicas sharing one database and disk.
 * Collections are not run (no network, no job runner).
 */
export function lifecycleReplica(database: DataSource, dataDir: string, now: () => Date) {
  const repository = new TaskLifecycleRepository(database);
  const clock = { now } as Clock;
  const config = testConfig({
    dataDir,
    tasks: { tickMs: 60_000, maxCompileAttempts: 3, collectIntervalMs: 3_600_000 },
  });
  const service = new TaskLifecycleService(
    repository,
    {} as NetworkService,
    {} as JobRunner,
    clock,
    config,
    new DatasetParquetService(repository, clock, config),
    new MetricsService(),
  );
  return { repository, service };
}

/**
 * An active Reddit task `id` on r/bitcoin that expired at `expiresAt`, collected up to it, with
 * `count` stored comments posted `spacingMs` apart before it (newest first).
 */
export async function insertExpiredTask(
  database: DataSource,
  id: string,
  expiresAt: number,
  count: number,
  spacingMs: number,
): Promise<void> {
  await database.query(
    `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, collect_head)
     VALUES ($1, 'reddit', 'r/bitcoin', 'active', '5Hotkey', $2::timestamptz - interval '7 days', $2, $2)`,
    [id, new Date(expiresAt).toISOString()],
  );
  const items = Array.from({ length: count }, (_, n) => {
    const datetime = new Date(expiresAt - (n + 1) * spacingMs).toISOString();
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
}

/** What a compile spec runs on: its own database, and a DATA_DIR of each test's own. */
export interface CompileFixture {
  database: DataSource;
  dataDir: string;
}

/**
 * Sets up a compile spec: a database of its own (`own`), a fresh DATA_DIR for each test, the
 * lifecycle's log lines silenced (spied on, for the tests to read), and the tasks deleted after
 * each test. Call at the top of a describe; read the fields inside its tests.
 */
export function compileFixture(own: string): CompileFixture {
  let medium: MediumDatabase;
  const fixture = {} as CompileFixture;
  beforeAll(async () => {
    medium = await openMediumDatabase({ own });
    fixture.database = medium.dataSource;
  });
  afterAll(() => medium.close());
  beforeEach(() => {
    fixture.dataDir = mkdtempSync(join(tmpdir(), `${own}-`));
    for (const level of ['log', 'warn', 'error'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    rmSync(fixture.dataDir, { recursive: true, force: true });
    await fixture.database.query('DELETE FROM scraping_tasks');
  });
  return fixture;
}
