import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { sample } from '../../../test/support/prometheus-text';
import { redditComment } from '../../../test/support/items';
import { linesLoggedBy } from '../../../test/support/logging-context';
import { Clock } from '../../common/clock/clock';
import { JobRunner } from '../../common/jobs/job-runner';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { NetworkService } from '../../network/network.service';
import { RedditItem } from '../../network/protocol';
import { NetworkQueryResult } from '../../network/query-result';
import { parquetPathBeside } from './dataset-parquet';
import { datasetPath } from './dataset-path';
import { DatasetParquetService, ParquetWriteOptions } from './dataset-parquet.service';
import { JsonLinesFile, manifestPathOf, ParquetFile } from './dataset-writer';
import { TaskLifecycleService } from './task-lifecycle.service';
import { TaskRow } from './task.types';
import { CompileFailureCount, TaskLifecycleRepository } from './task-lifecycle.repository';
import { TaskLock } from './task-row-lock';
import { testConfig } from '../../../test/support/test-config';

const NOW = new Date('2026-01-15T12:00:00Z');
const TWENTY_BYTES = 'twenty bytes of data';
const sha256Of = (text: string) => createHash('sha256').update(text).digest('hex');
const TWENTY_SHA = sha256Of(TWENTY_BYTES);

const TASK = {
  id: 'bitcoin',
  platform: 'x',
  label: '#bitcoin',
  keyword: null,
  post_start: null,
  post_end: null,
  collect_head: null,
  collect_cursor: null,
  collect_floor: null,
  collect_back_next: false,
} as unknown as TaskRow;

/** What a live round answers when every call failed: here, abandoned by the shutdown. */
const ABANDONED: NetworkQueryResult = {
  items: [],
  error: 'Every queried miner failed',
  origin: 'live',
  minersQueried: 3,
  minersResponded: 0,
  minersEmpty: 0,
  minersPassedChecks: 0,
  minersFailed: { count: 3, reasons: { shutdown: 3 } },
  minersWithoutBudget: 0,
  itemsDroppedInvalid: 0,
  consensus: 0,
  hedged: 0,
  deadlineReached: false,
};

/** The service with one due task whose collection's query answers when the test says. */
function setUp(task: TaskRow = TASK, tasks: Partial<AppConfig['tasks']> = {}) {
  let answer: (result: NetworkQueryResult) => void = () => undefined;
  const network = {
    query: jest.fn(() => new Promise<NetworkQueryResult>((resolve) => (answer = resolve))),
  };
  const repository = {
    dueForCollection: jest.fn(() => Promise.resolve([task])),
    recordCollectionFailure: jest.fn(() => Promise.resolve()),
    addItems: jest.fn((_id: string, items: readonly unknown[]) =>
      Promise.resolve({ added: items.length, outsideWindow: 0 }),
    ),
  };
  const config = testConfig({
    tasks: {
      collectIntervalMs: 3_600_000,
      collectConcurrency: 1,
      collectPerMinute: 60,
      collectLimit: 100,
      tickMs: 60_000,
      ...tasks,
    },
  });
  const metrics = new MetricsService();
  const service = new TaskLifecycleService(
    repository as unknown as TaskLifecycleRepository,
    network as unknown as NetworkService,
    {} as JobRunner,
    { now: () => NOW } as Clock,
    config,
    {} as DatasetParquetService,
    metrics,
  );
  const queried = async () => {
    while (network.query.mock.calls.length === 0) await new Promise(setImmediate);
  };
  return {
    service,
    repository,
    network,
    queried,
    answer: (result: NetworkQueryResult) => answer(result),
    collections: async (outcome: string) =>
      sample(await metrics.scrape(), 'gateway_task_collections_total', { outcome }),
  };
}

/** What the service tells the operator; the tests read it where it is the point. */
let logged: Record<'log' | 'warn' | 'error', jest.SpyInstance>;
beforeEach(() => {
  const silenced = (level: 'log' | 'warn' | 'error') =>
    jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  logged = { log: silenced('log'), warn: silenced('warn'), error: silenced('error') };
});
afterEach(() => jest.restoreAllMocks());

describe(TaskLifecycleService.name, () => {
  it('counts a collection whose every miner failed as a failure of the task, and says so', async () => {
    const { service, repository, queried, answer } = setUp();
    const pass = service.collectDue(1);
    await queried();
    answer(ABANDONED);
    await pass;
    expect(repository.recordCollectionFailure).toHaveBeenCalledWith(TASK.id, NOW);
    expect(logged.warn.mock.calls).toEqual([
      [
        { task_id: 'bitcoin', miners_failed: { shutdown: 3 }, miners_without_budget: 0 },
        'task bitcoin: nothing collected: Every queried miner failed (shutdown 3)',
      ],
    ]);
  });

  // "Every queried miner failed" alone did not tell open circuits from the miners' own failures
  // (an audit's finding): the failures by reason are fields of the line, and said in it.
  it('logs the failures of a collection that got nothing by reason, as fields', async () => {
    logged.warn.mockRestore();
    const { service, queried, answer } = setUp();
    const lines = await linesLoggedBy(TaskLifecycleService.name, 'info', async () => {
      const pass = service.collectDue(1);
      await queried();
      answer({
        ...ABANDONED,
        minersQueried: 5,
        minersFailed: { count: 5, reasons: { circuit_open: 4, timeout: 1 } },
      });
      await pass;
    });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        task_id: 'bitcoin',
        miners_failed: { circuit_open: 4, timeout: 1 },
        msg: 'task bitcoin: nothing collected: Every queried miner failed (circuit_open 4, timeout 1)',
      }),
    ]);
  });

  // Every miner with a task call left failed while the healthy ones' task share was spent by
  // users: the line read as every miner failing (an on-call audit's finding).
  it('says how many miners a collection that got nothing left out for want of budget', async () => {
    logged.warn.mockRestore();
    const { service, queried, answer } = setUp();
    const lines = await linesLoggedBy(TaskLifecycleService.name, 'info', async () => {
      const pass = service.collectDue(1);
      await queried();
      answer({
        ...ABANDONED,
        minersQueried: 2,
        minersFailed: { count: 2, reasons: { timeout: 2 } },
        minersWithoutBudget: 6,
      });
      await pass;
    });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        task_id: 'bitcoin',
        miners_failed: { timeout: 2 },
        miners_without_budget: 6,
        msg:
          'task bitcoin: nothing collected: Every queried miner failed (timeout 2); 6 miners not ' +
          "asked: their tasks' share of the OnDemandRequest budget is spent (TASK_BUDGET_RESERVE " +
          'keeps the rest for users)',
      }),
    ]);
  });

  // One info line per active task and pass said "0 new items" (an audit's finding): only a
  // collection that added items is said at info; the rest are debug lines.
  it('says a collection that added items at info, and one that found nothing new at debug', async () => {
    logged.log.mockRestore();
    const items = [storedItem(1, new Date('2026-01-15T11:00:00Z'))];
    const answered = { ...ABANDONED, error: undefined, items, minersResponded: 3 };
    const { service, repository, queried, answer, network } = setUp();
    const collect = async () => {
      network.query.mockClear();
      const pass = service.collectDue(1);
      await queried();
      answer(answered);
      await pass;
    };
    const lines = await linesLoggedBy(TaskLifecycleService.name, 'debug', async () => {
      await collect();
      repository.addItems.mockResolvedValueOnce({ added: 0, outsideWindow: 0 });
      await collect();
    });
    expect(lines.map(({ level, task_id, msg }) => ({ level, task_id, msg }))).toEqual([
      {
        level: 30,
        task_id: 'bitcoin',
        msg: 'task bitcoin: 1 new item (1 returned by 3 miners, newest page)',
      },
      {
        level: 20,
        task_id: 'bitcoin',
        msg: 'task bitcoin: 0 new items (1 returned by 3 miners, newest page)',
      },
    ]);
  });

  it('does not count a collection cut short by shutdown as a failure of the task', async () => {
    const { service, repository, queried, answer } = setUp();
    const pass = service.collectDue(1);
    await queried();
    // Shutdown: the service stops, then the miner client abandons the calls in flight.
    service.onModuleDestroy();
    answer(ABANDONED);
    await pass;
    expect(repository.recordCollectionFailure).not.toHaveBeenCalled();
    expect(logged.warn).not.toHaveBeenCalled();
  });

  // A task's keyword narrows its label: miners are asked for items with both.
  it("asks the miners for items with the task's label and keyword, newest first, a page at a time", async () => {
    const { service, network, queried, answer } = setUp({ ...TASK, keyword: 'etf' });
    const pass = service.collectDue(1);
    await queried();
    answer(ABANDONED);
    await pass;
    expect(network.query).toHaveBeenCalledWith(
      expect.objectContaining({
        source: 'x',
        keywords: ['#bitcoin', 'etf'],
        keywordMode: 'all',
        limit: 100,
        newestFirst: true,
        endDate: NOW,
      }),
      'task',
    );
  });

  // A miner sent the limit (100) and the checks dropped one: 99 items. Judged on those alone,
  // the page was not full and the older part of the range was never asked (an audit's finding).
  it.each([
    [true, new Date('2026-01-15T10:00:00Z'), true],
    [false, null, false],
  ])(
    'pages back from the oldest item when a miner sent the limit (%s), whatever the checks dropped',
    async (limitReached, cursor, backNext) => {
      const { service, repository, queried, answer } = setUp();
      const items = Array.from({ length: 99 }, (_, n) =>
        storedItem(n, new Date(Date.parse('2026-01-15T10:00:00Z') + n * 60_000)),
      );
      const pass = service.collectDue(1);
      await queried();
      answer({
        ...ABANDONED,
        error: undefined,
        items,
        minersResponded: 3,
        itemsDroppedInvalid: 1,
        limitReached,
      });
      await pass;
      expect(repository.addItems).toHaveBeenCalledWith(
        TASK.id,
        items,
        { head: NOW, cursor, floor: null, backNext },
        NOW,
      );
    },
  );

  // dueForCollection leaves such a task out; were it handed one, no miner is asked before it.
  it('asks the miners nothing for a task whose post window has not begun', async () => {
    const later = new Date(NOW.getTime() + 48 * 3_600_000);
    const { service, network, repository } = setUp({
      ...TASK,
      post_start: later,
      post_end: new Date(later.getTime() + 24 * 3_600_000),
    });
    await service.collectDue(1);
    expect(network.query).not.toHaveBeenCalled();
    expect(repository.addItems).not.toHaveBeenCalled();
    expect(repository.recordCollectionFailure).not.toHaveBeenCalled();
  });

  // One collection a minute, on a tick of ten seconds, is a sixth of one a pass: still one.
  it('starts at least one collection a pass, however small the per-minute budget', async () => {
    const { service, repository } = setUp(TASK, { collectPerMinute: 1, tickMs: 10_000 });
    repository.dueForCollection.mockResolvedValue([]);
    await service.collectDue();
    expect(repository.dueForCollection).toHaveBeenCalledWith(NOW, 3_600_000, 10_000, 1);
  });
});

/** Stored comment `n`, at `datetime`. */
function storedItem(n: number, datetime: Date): RedditItem {
  const uri = `https://www.reddit.com/r/bitcoin/comments/abc/title/c${n}/`;
  const time = datetime.toISOString();
  return redditComment({ uri, url: uri, id: `t1_c${n}`, datetime: time, createdAt: time });
}

/**
 * The service with one expired task whose stored items are `items`, paged as the repository's
 * SQL pages them: by (datetime, uri), after the last row of the page before.
 */
function compiling(items: RedditItem[], dataDir: string) {
  const ordered = [...items].sort(
    (a, b) => Date.parse(a.datetime) - Date.parse(b.datetime) || (a.uri < b.uri ? -1 : 1),
  );
  const after = (item: RedditItem, uri: string, time: Date) =>
    Date.parse(item.datetime) > time.getTime() ||
    (Date.parse(item.datetime) === time.getTime() && item.uri > uri);
  const repository = {
    claimExpired: jest.fn(() => Promise.resolve([COMPILED_TASK])),
    itemsPage: jest.fn(
      (_taskId: string, afterUri: string | null, afterTime: Date | null, limit: number) =>
        Promise.resolve(
          ordered
            .filter((item) => afterTime === null || after(item, afterUri!, afterTime))
            .slice(0, limit)
            .map((item) => ({ uri: item.uri, datetime: new Date(item.datetime), item })),
        ),
    ),
    // The task's row as a compile's lock finds it: compiling, unless a test says otherwise.
    lockTask: jest.fn((_id: string, work: (lock: TaskLock) => Promise<unknown>) =>
      work({ state: 'compiling' } as TaskLock),
    ),
    markCompleted: jest.fn((_id: string, _dataset: unknown, _now: Date, _lock?: TaskLock) =>
      Promise.resolve(true),
    ),
    recordCompileFailure: jest.fn((): Promise<CompileFailureCount | null> =>
      Promise.resolve({ state: 'compiling', compile_attempts: 1 }),
    ),
  };
  const parquet = {
    tryWrite: jest.fn(
      (_task: TaskRow, _jsonl: JsonLinesFile, _options?: ParquetWriteOptions) =>
        Promise.resolve(null) as Promise<ParquetFile | null>,
    ),
  };
  const config = testConfig({ dataDir, tasks: { tickMs: 60_000, maxCompileAttempts: 3 } });
  const metrics = new MetricsService();
  const service = new TaskLifecycleService(
    repository as unknown as TaskLifecycleRepository,
    {} as NetworkService,
    {} as JobRunner,
    { now: () => NOW } as Clock,
    config,
    parquet as unknown as DatasetParquetService,
    metrics,
  );
  const compileFailures = async (reason: string) =>
    sample(await metrics.scrape(), 'gateway_task_compile_failures_total', { reason });
  return { service, repository, ordered, parquet, compileFailures };
}

const COMPILED_TASK = {
  ...TASK,
  id: 'r-bitcoin',
  platform: 'reddit',
  label: 'r/bitcoin',
  // Its final collection done at expiry, nothing left of it.
  expires_at: NOW,
  last_collected_at: NOW,
} as TaskRow;

describe(`${TaskLifecycleService.name} compiling`, () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'task-compile-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  // Pages of 1000 rows: seven items a second put items of one instant on both sides of a page's
  // end.
  it('writes every stored item once, oldest first, across pages that end inside an instant', async () => {
    const start = Date.UTC(2026, 0, 8);
    const items = Array.from({ length: 2005 }, (_, n) =>
      storedItem(n, new Date(start + Math.floor(n / 7) * 1000)),
    );
    const { service, repository, ordered } = compiling(items, dataDir);

    expect(await service.compileExpired()).toBe(1);

    const path = datasetPath(dataDir, COMPILED_TASK.id);
    const uris = gunzipSync(readFileSync(path))
      .toString()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as RedditItem).uri);
    expect(uris).toEqual(ordered.map((item) => item.uri));
    expect(repository.markCompleted).toHaveBeenCalledWith(
      COMPILED_TASK.id,
      expect.objectContaining({
        rows: 2005,
        start: new Date(ordered[0].datetime),
        end: new Date(ordered[2004].datetime),
        parquet: null,
      }),
      NOW,
      expect.anything(),
    );
    expect(repository.recordCompileFailure).not.toHaveBeenCalled();
    expect(logged.log).toHaveBeenCalledWith(
      { task_id: 'r-bitcoin' },
      expect.stringMatching(
        /^task r-bitcoin: dataset of 2005 rows, \d+ bytes, sha256 [0-9a-f]{64}$/,
      ),
    );
  });

  // Shutdown waits for the pass: compiling every expired task first kept it waiting, and a
  // replica killed at its grace period's end left a half-written file (an audit's finding).
  it('compiles no further task once stopping: those left stay compiling for the next pass', async () => {
    const { service, repository } = compiling([], dataDir);
    const second = { ...COMPILED_TASK, id: 'r-ethereum' };
    repository.claimExpired.mockResolvedValue([COMPILED_TASK, second]);
    repository.itemsPage.mockImplementationOnce(() => {
      service.onModuleDestroy();
      return Promise.resolve([]);
    });

    expect(await service.compileExpired()).toBe(1);

    // The compile under way, its last page read, finishes; the next is not started.
    expect(repository.markCompleted).toHaveBeenCalledTimes(1);
    expect(repository.markCompleted).toHaveBeenCalledWith(
      COMPILED_TASK.id,
      expect.anything(),
      NOW,
      expect.anything(),
    );
    expect(repository.itemsPage).toHaveBeenCalledTimes(1);
  });

  // A vote's jobs expire together: compiled back to back at about 9 s each, the collections
  // waited for all of them (an audit's finding).
  it('starts no further compile once a pass has compiled for its budget: the rest wait for the next pass', async () => {
    const { service, repository } = compiling([], dataDir);
    const tasks = ['a', 'b', 'c'].map((id) => ({ ...COMPILED_TASK, id }));
    repository.claimExpired.mockResolvedValue(tasks);
    // Each compile takes 20 s of real time; the budget is 30 s.
    let elapsed = 0;
    jest.spyOn(performance, 'now').mockImplementation(() => elapsed);
    repository.itemsPage.mockImplementation(() => {
      elapsed += 20_000;
      return Promise.resolve([]);
    });

    expect(await service.compileExpired(30_000)).toBe(2);

    expect(repository.markCompleted.mock.calls.map(([id]) => id)).toEqual(['a', 'b']);
    expect(logged.log).toHaveBeenCalledWith('1 tasks left compiling for the next pass');
  });

  it('compiles one task a pass however long it takes', async () => {
    const { service, repository } = compiling([], dataDir);
    repository.claimExpired.mockResolvedValue([COMPILED_TASK, { ...COMPILED_TASK, id: 'b' }]);
    let elapsed = 0;
    jest.spyOn(performance, 'now').mockImplementation(() => elapsed);
    repository.itemsPage.mockImplementation(() => {
      elapsed += 120_000;
      return Promise.resolve([]);
    });

    expect(await service.compileExpired()).toBe(1);
  });

  // Never deleted, a task's items stayed in task_items for good (an audit's finding).
  it('deletes the stored items of a completed task whose dataset file is on disk, and keeps those of one whose file is not', async () => {
    const { service, repository: stored } = compiling([], dataDir);
    const present = datasetPath(dataDir, 'present');
    mkdirSync(dirname(present), { recursive: true });
    writeFileSync(present, TWENTY_BYTES);
    const tasks = [
      { id: 'present', dataset_file: present, dataset_bytes: '20', dataset_sha256: TWENTY_SHA },
      {
        id: 'missing',
        dataset_file: datasetPath(dataDir, 'missing'),
        dataset_bytes: '20',
        dataset_sha256: TWENTY_SHA,
      },
      { id: 'cut-short', dataset_file: present, dataset_bytes: '30', dataset_sha256: TWENTY_SHA },
      // The size kept, a byte changed in place (a filesystem faults audit): the items are the
      // last copy of the rows the file no longer holds.
      {
        id: 'changed',
        dataset_file: present,
        dataset_bytes: '20',
        dataset_sha256: sha256Of('twenty bytes of DATA'),
      },
    ];
    const repository = {
      completedWithItems: jest.fn((skip: readonly string[], _before: Date, _limit: number) =>
        Promise.resolve(tasks.filter((task) => !skip.includes(task.id))),
      ),
      deleteCompletedItems: jest.fn(() => Promise.resolve(1)),
    };
    // The pruner holds the service's repository: the fake gets the methods pruning reads.
    Object.assign(stored, repository);

    expect(await service.pruneCompletedItems()).toBe(1);
    // Only tasks completed an hour ago or more: a compile of one completed since may be reading
    // them.
    expect(repository.completedWithItems).toHaveBeenCalledWith(
      [],
      new Date(NOW.getTime() - 3_600_000),
      10,
    );
    expect(repository.deleteCompletedItems.mock.calls).toEqual([['present']]);
    expect(logged.warn.mock.calls.map(([, message]) => message as string)).toEqual([
      `task missing: its stored items are kept: its dataset file ${datasetPath(dataDir, 'missing')} is missing; looked at again in a day`,
      `task cut-short: its stored items are kept: its dataset file ${present} has 20 bytes, not the 30 recorded; looked at again in a day`,
      `task changed: its stored items are kept: its dataset file ${present} holds other bytes than the SHA-256 recorded names; looked at again in a day`,
    ]);

    // Said once a day: the next pass does not look at them again (task-pruner.spec.ts: a day later).
    await service.pruneCompletedItems();
    expect(repository.completedWithItems).toHaveBeenLastCalledWith(
      ['missing', 'cut-short', 'changed'],
      expect.any(Date),
      10,
    );
    expect(logged.warn).toHaveBeenCalledTimes(3);
  });

  // The task records the compiler's directory: another replica's mount of the shared volume, or
  // a DATA_DIR since moved. Checked there, a file only this server lacks let the items be deleted.
  it("checks the dataset file by its name under this server's DATA_DIR, not in the directory the task recorded", async () => {
    const { service, repository: stored } = compiling([], dataDir);
    const here = datasetPath(dataDir, 'here');
    mkdirSync(dirname(here), { recursive: true });
    writeFileSync(here, TWENTY_BYTES);
    const elsewhere = join(dataDir, 'another-mount', 'datasets');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'not-here.jsonl.gz'), TWENTY_BYTES);
    const recorded = { dataset_bytes: '20', dataset_sha256: TWENTY_SHA };
    const tasks = [
      { id: 'here', dataset_file: join(elsewhere, 'here.jsonl.gz'), ...recorded },
      { id: 'not-here', dataset_file: join(elsewhere, 'not-here.jsonl.gz'), ...recorded },
    ];
    const repository = {
      completedWithItems: jest.fn(() => Promise.resolve(tasks)),
      deleteCompletedItems: jest.fn(() => Promise.resolve(1)),
    };
    // The pruner holds the service's repository: the fake gets the methods pruning reads.
    Object.assign(stored, repository);

    expect(await service.pruneCompletedItems()).toBe(1);
    expect(repository.deleteCompletedItems.mock.calls).toEqual([['here']]);
    expect(logged.warn.mock.calls).toEqual([
      [
        { task_id: 'not-here' },
        `task not-here: its stored items are kept: its dataset file ${datasetPath(dataDir, 'not-here')} is missing; looked at again in a day`,
      ],
    ]);
  });

  /**
   * Has the compile's Parquet step write a file beside the JSON lines file, as it does: renamed
   * into place through the compile's `renameWith`.
   */
  function writingParquet(parquet: ReturnType<typeof compiling>['parquet']) {
    parquet.tryWrite.mockImplementation(async (_task, jsonl, options) => {
      const file = parquetPathBeside(jsonl.file);
      writeFileSync(`${file}.partial`, 'PAR1');
      const rename = () => Promise.resolve(renameSync(`${file}.partial`, file));
      await (options?.renameWith
        ? options.renameWith(rename, { bytes: 4, sha256: '0'.repeat(64) })
        : rename());
      return { file, bytes: 4, sha256: '0'.repeat(64) };
    });
  }

  // The manifest's rename fails on a directory in its place (an audit's reproduction): the task
  // ended failed, answered 410, with its complete files left on disk for good.
  it('removes the files it renamed into place when the compile fails after them', async () => {
    const { service, repository, parquet } = compiling([], dataDir);
    writingParquet(parquet);
    const path = datasetPath(dataDir, COMPILED_TASK.id);
    mkdirSync(manifestPathOf(path), { recursive: true });

    // Failed: the pass counts no compile.
    expect(await service.compileExpired()).toBe(0);

    expect(repository.recordCompileFailure).toHaveBeenCalledTimes(1);
    expect(repository.markCompleted).not.toHaveBeenCalled();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(parquetPathBeside(path))).toBe(false);
    // Not this attempt's: left alone.
    expect(existsSync(manifestPathOf(path))).toBe(true);
  });

  it('removes its manifest too when the task cannot be marked completed', async () => {
    const { service, repository, parquet } = compiling([], dataDir);
    writingParquet(parquet);
    repository.markCompleted.mockRejectedValue(new Error('deadlock detected'));
    const path = datasetPath(dataDir, COMPILED_TASK.id);

    await service.compileExpired();

    for (const file of [path, parquetPathBeside(path), manifestPathOf(path)])
      expect({ file, exists: existsSync(file) }).toEqual({ file, exists: false });
  });

  // The completion may have committed though its answer was lost: the files are the dataset.
  it('keeps the files when the task was no longer compiling at the failure', async () => {
    const { service, repository, parquet } = compiling([], dataDir);
    writingParquet(parquet);
    repository.markCompleted.mockRejectedValue(new Error('Connection terminated unexpectedly'));
    repository.recordCompileFailure.mockResolvedValue(null);
    const path = datasetPath(dataDir, COMPILED_TASK.id);

    await service.compileExpired();

    for (const file of [path, parquetPathBeside(path), manifestPathOf(path)])
      expect({ file, exists: existsSync(file) }).toEqual({ file, exists: true });
  });

  // A second replica compiling the task at once (the job's lock lost) renames its own file there.
  it('keeps a file another writer renamed over the one it wrote', async () => {
    const { service, repository, parquet } = compiling([], dataDir);
    writingParquet(parquet);
    const path = datasetPath(dataDir, COMPILED_TASK.id);
    repository.markCompleted.mockImplementation(() => {
      writeFileSync(`${path}.other`, 'the other replica');
      renameSync(`${path}.other`, path);
      return Promise.reject(new Error('deadlock detected'));
    });

    await service.compileExpired();

    expect(readFileSync(path, 'utf8')).toBe('the other replica');
    expect(existsSync(parquetPathBeside(path))).toBe(false);
  });

  // Another replica (its job lock lost) completed the task while this one paged: its files are
  // the dataset the task records, and an empty one renamed over them was a permanent 503.
  it('renames nothing over the files in place once the task is no longer compiling', async () => {
    const { service, repository, parquet } = compiling([], dataDir);
    writingParquet(parquet);
    // Compiling when it looks for a complete dataset at the path, completed once it has paged.
    repository.lockTask
      .mockImplementationOnce((_id, work) => work({ state: 'compiling' } as TaskLock))
      .mockImplementation((_id, work) => work({ state: 'completed' } as TaskLock));
    const path = datasetPath(dataDir, COMPILED_TASK.id);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'the other replica');

    await service.compileExpired();

    expect(readFileSync(path, 'utf8')).toBe('the other replica');
    expect(parquet.tryWrite).not.toHaveBeenCalled();
    expect(existsSync(manifestPathOf(path))).toBe(false);
    expect(repository.markCompleted).not.toHaveBeenCalled();
    expect(repository.recordCompileFailure).not.toHaveBeenCalled();
    expect(readdirSync(dirname(path))).toEqual([`${COMPILED_TASK.id}.jsonl.gz`]);
    expect(logged.warn.mock.calls).toEqual([
      [
        { task_id: 'r-bitcoin' },
        "task r-bitcoin: completed or failed elsewhere meanwhile; this compile's dataset discarded",
      ],
    ]);
  });

  it('says it lost the race, not that it made a dataset, when the task was completed before it', async () => {
    const { service, repository } = compiling([], dataDir);
    repository.markCompleted.mockResolvedValue(false);

    await service.compileExpired();

    expect(repository.recordCompileFailure).not.toHaveBeenCalled();
    expect(logged.log).not.toHaveBeenCalledWith(
      expect.anything(),
      expect.stringContaining('dataset of'),
    );
    expect(logged.warn.mock.calls).toEqual([
      [
        { task_id: 'r-bitcoin' },
        "task r-bitcoin: completed or failed elsewhere meanwhile; this compile's dataset discarded",
      ],
    ]);
  });

  // A failed rename names both files: neither directory is anyone's business but the operator's.
  it("records why a compile failed without the server's directories, of either file an error names", async () => {
    const { service, repository } = compiling([], dataDir);
    const from = '/srv/data/datasets/r-bitcoin.jsonl.gz.1b4e28ba.partial';
    const to = '/srv/data/datasets/r-bitcoin.jsonl.gz';
    repository.itemsPage.mockRejectedValue(
      Object.assign(
        new Error(`EXDEV: cross-device link not permitted, rename '${from}' -> '${to}'`),
        {
          path: from,
          dest: to,
        },
      ),
    );

    await service.compileExpired();

    expect(repository.recordCompileFailure).toHaveBeenCalledWith(
      COMPILED_TASK.id,
      "EXDEV: cross-device link not permitted, rename 'r-bitcoin.jsonl.gz.1b4e28ba.partial' -> 'r-bitcoin.jsonl.gz'",
      3,
      NOW,
    );
    // The operator's log keeps the whole message: the directories are theirs.
    expect(logged.error.mock.calls).toEqual([
      [
        { task_id: 'r-bitcoin' },
        `task r-bitcoin: compile failed: EXDEV: cross-device link not permitted, rename '${from}' -> '${to}'`,
      ],
    ]);
  });

  // Each attempt's failure was logged, the last one like any other: nothing said the task was
  // lost for good (an on-call audit's finding).
  it('writes a line of its own, at error, when a task fails for good', async () => {
    const { service, repository } = compiling([], dataDir);
    repository.itemsPage.mockRejectedValue(new Error('EIO: i/o error, read'));
    repository.recordCompileFailure.mockResolvedValue({ state: 'failed', compile_attempts: 3 });

    await service.compileExpired();

    expect(logged.error.mock.calls).toEqual([
      [{ task_id: 'r-bitcoin' }, 'task r-bitcoin: compile failed: EIO: i/o error, read'],
      [
        { task_id: 'r-bitcoin', reason: 'EIO: i/o error, read', compile_attempts: 3 },
        'task r-bitcoin failed for good after 3 compile attempts: EIO: i/o error, read',
      ],
    ]);
  });

  it('writes no such line for a failure that will be tried again', async () => {
    const { service, repository } = compiling([], dataDir);
    repository.itemsPage.mockRejectedValue(new Error('EIO: i/o error, read'));

    await service.compileExpired();

    expect(logged.error).toHaveBeenCalledTimes(1);
  });
});

// A compile failing showed only once the task was `failed`, three attempts and some 3 hours
// later; a collection getting nothing only in the log.
describe(`${TaskLifecycleService.name} metrics`, () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'task-metrics-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('counts a compile that failed on the disk under io, at its first attempt', async () => {
    const { service, compileFailures } = compiling([], dataDir);
    // The manifest's rename finds a directory in its place (EISDIR).
    mkdirSync(manifestPathOf(datasetPath(dataDir, COMPILED_TASK.id)), { recursive: true });

    await service.compileExpired();

    expect(await compileFailures('io')).toBe(1);
    expect(await compileFailures('other')).toBe(0);
  });

  it.each([
    [
      'disk_full',
      Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'write',
      }),
    ],
    [
      'database',
      new QueryFailedError(
        'SELECT …',
        [],
        Object.assign(new Error('deadlock detected'), { code: '40P01' }),
      ),
    ],
    ['database', new Error('Connection terminated unexpectedly')],
    ['other', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('counts a compile that failed so under %s', async (reason, error) => {
    const { service, repository, compileFailures } = compiling([], dataDir);
    repository.markCompleted.mockRejectedValue(error);

    await service.compileExpired();

    expect(await compileFailures(reason)).toBe(1);
  });

  // The write stream's error names no file: which volume filled was left to guess.
  it('names the dataset file on the line of a disk error that names none', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { service, repository } = compiling([], dataDir);
    repository.markCompleted.mockRejectedValue(
      Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        syscall: 'write',
      }),
    );

    await service.compileExpired();

    expect(errors).toHaveBeenCalledWith(
      { task_id: COMPILED_TASK.id },
      `task ${COMPILED_TASK.id}: compile failed: ENOSPC: no space left on device, write ` +
        `(writing ${datasetPath(dataDir, COMPILED_TASK.id)})`,
    );
  });

  it('counts a compile that could not read a stored item under conversion', async () => {
    const { service, repository, compileFailures } = compiling([], dataDir);
    const uri = 'https://x.com/someone/status/1';
    // An X row without its post: no current shape can be read from it.
    const broken = { source: 'X', uri } as unknown as RedditItem;
    repository.itemsPage.mockResolvedValue([{ uri, datetime: NOW, item: broken }]);

    await service.compileExpired();

    expect(repository.recordCompileFailure).toHaveBeenCalledTimes(1);
    expect(await compileFailures('conversion')).toBe(1);
  });

  it('counts no failure for a compile given up to another replica', async () => {
    const { service, repository, compileFailures } = compiling([], dataDir);
    repository.markCompleted.mockResolvedValue(false);

    await service.compileExpired();

    for (const reason of ['disk_full', 'io', 'database', 'conversion', 'other'])
      expect([reason, await compileFailures(reason)]).toEqual([reason, 0]);
  });

  it('counts collections by outcome: items, nothing new, nothing collected', async () => {
    const items = [storedItem(1, new Date('2026-01-15T11:00:00Z'))];
    const answered = { ...ABANDONED, error: undefined, items, minersResponded: 3 };
    const { service, repository, queried, answer, collections, network } = setUp();
    const collect = async (result: NetworkQueryResult) => {
      network.query.mockClear();
      const pass = service.collectDue(1);
      await queried();
      answer(result);
      await pass;
    };

    await collect(answered);
    repository.addItems.mockResolvedValueOnce({ added: 0, outsideWindow: 0 });
    await collect(answered);
    await collect(ABANDONED);

    expect(await collections('collected')).toBe(1);
    expect(await collections('nothing_new')).toBe(1);
    expect(await collections('nothing_collected')).toBe(1);
    expect(await collections('failed')).toBe(0);
  });

  it('counts a collection that threw as failed, and one cut short by shutdown apart', async () => {
    const { service, repository, queried, answer, collections, network } = setUp();
    repository.addItems.mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));
    let pass = service.collectDue(1);
    await queried();
    answer({ ...ABANDONED, error: undefined, minersResponded: 3 });
    await pass;
    network.query.mockClear();
    pass = service.collectDue(1);
    await queried();
    service.onModuleDestroy();
    answer(ABANDONED);
    await pass;

    expect(await collections('failed')).toBe(1);
    expect(await collections('shutdown')).toBe(1);
    expect(await collections('nothing_collected')).toBe(0);
  });

  // Some miners answered, others were abandoned by our shutdown: saved, the page counted as
  // asked of all of them (a shutdown audit's finding).
  it('saves nothing of a collection some of whose calls shutdown abandoned, and leaves it due', async () => {
    const { service, repository, queried, answer, collections } = setUp();
    const pass = service.collectDue(1);
    await queried();
    service.onModuleDestroy();
    answer({
      ...ABANDONED,
      error: undefined,
      items: [storedItem(1, new Date('2026-01-15T11:00:00Z'))],
      minersResponded: 1,
      minersFailed: { count: 2, reasons: { shutdown: 2 } },
    });
    await pass;

    expect(repository.addItems).not.toHaveBeenCalled();
    expect(repository.recordCollectionFailure).not.toHaveBeenCalled();
    expect(await collections('shutdown')).toBe(1);
  });

  it('counts a collection with nothing to ask for as skipped', async () => {
    const later = new Date(NOW.getTime() + 48 * 3_600_000);
    const { service, collections } = setUp({
      ...TASK,
      post_start: later,
      post_end: new Date(later.getTime() + 24 * 3_600_000),
    });

    await service.collectDue(1);

    expect(await collections('skipped')).toBe(1);
  });
});
