import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { JobRunner } from '../../src/common/jobs/job-runner';
import { MetricsService } from '../../src/common/metrics/metrics.service';
import { NetworkService } from '../../src/network/network.service';
import { NetworkQueryResult } from '../../src/network/query-result';
import { DataItem, NetworkQuery } from '../../src/network/protocol';
import { DatasetParquetService } from '../../src/modules/tasks/dataset-parquet.service';
import { DatasetManifest, manifestPathOf } from '../../src/modules/tasks/dataset-writer';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { TasksService } from '../../src/modules/tasks/tasks.service';
import { CompletedTask } from '../../src/modules/tasks/task.types';
import { redditComment } from '../support/items';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { testConfig } from '../support/test-config';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (hours: number) => new Date(T0 + hours * HOUR);

/** Reddit comment `n`, posted at `datetime`. */
function comment(n: number, datetime: Date): DataItem {
  const uri = `https://www.reddit.com/r/bitcoin/comments/abc/title/c${n}/`;
  const time = datetime.toISOString();
  return redditComment({ uri, url: uri, id: `t1_c${n}`, datetime: time, createdAt: time });
}

/**
 * A task's last hour: the posts between its last regular collection and its expiry are asked
 * for once more before its dataset is compiled (docs/decisions.md, "Scraping task lifecycle").
 * Before, collections stopped at expiry and the compile followed, so up to an interval of the
 * task's newest posts was never collected.
 */
describe('The final collection of a task at its expiry', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let dataDir: string;
  let now: Date;
  /** What the miners hold, and the pages asked of them. */
  let posts: DataItem[];
  let asked: { start: Date | null; end: Date }[];
  let failing: boolean;

  /** The miners: the newest posts of the asked range, up to the limit, or a round none answered. */
  const network = {
    query: (plan: NetworkQuery) => {
      const start = plan.startDate;
      const end = plan.endDate;
      asked.push({ start, end });
      if (failing) return Promise.resolve({ items: [], error: 'no miner answered' });
      const items = posts
        .filter((post) => {
          const time = Date.parse(post.datetime);
          return (!start || time >= start.getTime()) && time <= end.getTime();
        })
        .sort((a, b) => Date.parse(b.datetime) - Date.parse(a.datetime))
        .slice(0, plan.limit);
      return Promise.resolve({ items, minersResponded: 1 } as Partial<NetworkQueryResult>);
    },
  } as unknown as NetworkService;

  const lifecycle = () => {
    const repository = new TaskLifecycleRepository(database);
    const clock = { now: () => now } as Clock;
    const config = testConfig({
      dataDir,
      tasks: {
        collectIntervalMs: HOUR,
        collectLimit: 100,
        collectConcurrency: 2,
        collectPerMinute: 20,
        tickMs: 60_000,
        maxCompileAttempts: 3,
      },
    });
    return new TaskLifecycleService(
      repository,
      network,
      {} as JobRunner,
      clock,
      config,
      new DatasetParquetService(repository, clock, config),
      new MetricsService(),
    );
  };

  /** An active task registered at T0 that expires two hours later. */
  const insert = (id: string) =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at)
       VALUES ($1, 'reddit', 'r/bitcoin', 'active', '5Hotkey', $2, $3)`,
      [id, at(0).toISOString(), at(2).toISOString()],
    );
  const task = async (id: string) =>
    (
      await database.query<{ state: string; dataset_file: string | null }[]>(
        'SELECT state, dataset_file FROM scraping_tasks WHERE id = $1',
        [id],
      )
    )[0];
  /** The dataset's gap as the API shows the task (`GET /api/v1/tasks/{id}`). */
  const shownGap = async (id: string) => {
    const config = testConfig({ tasks: { collectIntervalMs: HOUR, tickMs: 60_000 } });
    const tasks = new TasksService(
      new TasksRepository(database),
      { now: () => now } as Clock,
      config,
    );
    const shown = await tasks.get(id);
    expect(shown.dataset).toBeDefined();
    return shown.dataset!.gap;
  };
  /** The gap the manifest beside the dataset says (`<file>.manifest.json`). */
  const manifestGap = async (id: string) => {
    const { dataset_file: file } = await task(id);
    return (JSON.parse(readFileSync(manifestPathOf(file!), 'utf8')) as DatasetManifest).gap;
  };
  const datasetUris = async (id: string) => {
    const { dataset_file: file } = await task(id);
    return gunzipSync(readFileSync(file!))
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as DataItem).uri);
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskfinalcollect' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'task-final-collection-'));
    asked = [];
    failing = false;
    // One task at a time: completion times only grow, and each test's clock starts at T0.
    await database.query('DELETE FROM scraping_tasks');
    for (const level of ['log', 'warn', 'error'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('collects the posts made between the last regular collection and expiry into the dataset', async () => {
    posts = [comment(1, at(0.5)), comment(2, at(1.5)), comment(3, at(2.5))];
    await insert('last-hour');
    const service = lifecycle();
    now = at(1);
    expect(await service.runOnce()).toEqual({ collected: 1, compiled: 0 });

    // The next pass after expiry: the last hour is asked for (up to expiry, not after), then
    // compiled.
    now = new Date(at(2).getTime() + 60_000);
    const pass = await service.runOnce();
    expect(await task('last-hour')).toMatchObject({ state: 'completed' });
    expect(await datasetUris('last-hour')).toEqual([posts[0].uri, posts[1].uri]);
    expect(pass).toEqual({ collected: 1, compiled: 1 });
    expect(asked[asked.length - 1]).toEqual({ start: at(1), end: at(2) });
    expect(await shownGap('last-hour')).toBeNull();
    expect(await manifestGap('last-hour')).toBeNull();
  });

  // More than a page (100) of posts in the last hour: the final page came back full, and the
  // posts older than its oldest were never asked for (an audit's finding).
  it('pages back through a busy last hour down to the last collection before compiling', async () => {
    const lastHour = Array.from({ length: 150 }, (_, n) => comment(n + 2, at(1 + (n + 1) / 200)));
    posts = [comment(1, at(0.5)), ...lastHour];
    await insert('busy-hour');
    const service = lifecycle();
    now = at(1);
    await service.runOnce();

    now = new Date(at(2).getTime() + 60_000);
    // The newest 100 of the last hour: the compile waits for the rest.
    expect(await service.runOnce()).toEqual({ collected: 1, compiled: 0 });
    now = new Date(at(2).getTime() + 120_000);
    expect(await service.runOnce()).toEqual({ collected: 1, compiled: 1 });
    expect(asked.slice(1)).toEqual([
      { start: at(1), end: at(2) },
      { start: at(1), end: new Date(lastHour[50].datetime) },
    ]);
    expect((await datasetUris('busy-hour')).sort()).toEqual(posts.map((post) => post.uri).sort());
    expect(await shownGap('busy-hour')).toBeNull();
  });

  // A label too busy for the pages an interval allows: compiled then, and the range left says so.
  it('compiles a final collection still paging an interval after expiry, and says what it lacks', async () => {
    posts = Array.from({ length: 300 }, (_, n) => comment(n + 1, at(1 + (n + 1) / 400)));
    await insert('busier-hour');
    const service = lifecycle();
    now = at(1);
    await service.runOnce();
    now = new Date(at(2).getTime() + 60_000);
    await service.runOnce();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);

    now = at(3);
    expect(await service.compileExpired()).toBe(1);
    expect(await datasetUris('busier-hour')).toHaveLength(100);
    expect(warn).toHaveBeenCalledWith(
      { task_id: 'busier-hour' },
      expect.stringContaining(
        `busier-hour: its final collection did not reach the posts of ${at(1).toISOString()} to ${posts[200].datetime}`,
      ),
    );
    // The task says it too, to a client about to download the dataset, and so does the manifest.
    const gap = { start: at(1).toISOString(), end: posts[200].datetime };
    expect(await shownGap('busier-hour')).toEqual(gap);
    expect(await manifestGap('busier-hour')).toEqual(gap);
  });

  // A heavier task's older posts wait for every task's last hour.
  it('asks for the first final page of every task before paging any back', async () => {
    posts = Array.from({ length: 150 }, (_, n) => comment(n + 1, at(1 + (n + 1) / 200)));
    await insert('heavy');
    await insert('light');
    await database.query(`UPDATE scraping_tasks SET weight = 1 WHERE id = 'heavy'`);
    const service = lifecycle();
    now = at(1);
    await service.collectDue();

    now = new Date(at(2).getTime() + 60_000);
    expect(await service.collectDue(1)).toBe(1);
    expect(await service.collectDue(1)).toBe(1);
    expect(asked.slice(2)).toEqual([
      { start: at(1), end: at(2) },
      { start: at(1), end: at(2) },
    ]);
  });

  // Its window's end is what the final collection pages to: a task collected up to it before
  // expiry has nothing left to ask for (a mutation audit's finding: `collect_head < expires_at`).
  it('does not await a final collection for a task collected up to a post window ending before expiry', async () => {
    await insert('window-ended');
    await database.query(
      `UPDATE scraping_tasks SET post_end = $2, collect_head = $2, last_collected_at = $3 WHERE id = $1`,
      ['window-ended', at(1).toISOString(), at(1.5).toISOString()],
    );
    const repository = new TaskLifecycleRepository(database);
    const afterExpiry = new Date(at(2).getTime() + 1_000);

    const claimed = await repository.claimExpired(afterExpiry, 60_000, HOUR, HOUR);
    expect(claimed.map((row) => row.id)).toEqual(['window-ended']);
    expect(await repository.dueForCollection(afterExpiry, HOUR, 60_000, 10)).toEqual([]);
  });

  it('compiles after a failed final collection, and waits at most an interval for one', async () => {
    posts = [comment(1, at(0.5))];
    await insert('failed-final');
    const service = lifecycle();
    now = at(1);
    await service.runOnce();
    failing = true;
    now = new Date(at(2).getTime() + 60_000);
    // Tried once, failed: compiled with what was collected, not held for more attempts.
    expect(await service.runOnce()).toEqual({ collected: 1, compiled: 1 });
    expect(await datasetUris('failed-final')).toEqual([posts[0].uri]);
    expect(await shownGap('failed-final')).toEqual({
      start: at(1).toISOString(),
      end: at(2).toISOString(),
    });

    // No collection reached it (a budget spent on heavier tasks): compiled an interval after
    // expiry.
    failing = false;
    await insert('no-budget');
    now = new Date(at(2).getTime() + 60_000);
    expect(await service.compileExpired()).toBe(0);
    expect(await task('no-budget')).toMatchObject({ state: 'compiling' });
    now = at(3);
    expect(await service.compileExpired()).toBe(1);
    expect(await task('no-budget')).toMatchObject({ state: 'completed' });
    // Never collected, and its window has no start: everything up to expiry.
    expect(await shownGap('no-budget')).toEqual({ start: null, end: at(2).toISOString() });
    expect(await manifestGap('no-budget')).toEqual({ start: null, end: at(2).toISOString() });

    // A manifest rewritten at a download's Parquet conversion (a task completed before Parquet
    // existed) says the same gap.
    await database.query(
      `UPDATE scraping_tasks SET parquet_file = NULL, parquet_bytes = NULL, parquet_sha256 = NULL
       WHERE id = 'failed-final'`,
    );
    const repository = new TaskLifecycleRepository(database);
    const clock = { now: () => now } as Clock;
    const [completed] = await database.query<CompletedTask[]>(
      `SELECT * FROM scraping_tasks WHERE id = 'failed-final'`,
    );
    expect(
      await new DatasetParquetService(repository, clock, testConfig({ dataDir })).ensure(completed),
    ).not.toBeNull();
    expect(await manifestGap('failed-final')).toEqual(await shownGap('failed-final'));
    expect(await manifestGap('failed-final')).toEqual({
      start: at(1).toISOString(),
      end: at(2).toISOString(),
    });
  });
});
