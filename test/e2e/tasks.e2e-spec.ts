import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { datasetPath } from '../../src/modules/tasks/dataset-path';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { DataItem } from '../../src/network/protocol';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { matchesPlainly, startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { registerTask } from '../support/tasks';
import { asBytes, jsonLines } from '../support/downloads';

const DAY = 24 * 3600 * 1000;

describe('Scraping task lifecycle', () => {
  let network: TestNetwork;
  let dataDir: string;
  let databaseName: string;
  let env: Record<string, string>;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(3);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-tasks-'));
    databaseName = scratchDatabaseName('tasks');
    const databaseUrl = await createDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    env = {
      ...network.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      QUERY_MINERS: '3',
      QUERY_QUORUM: '3',
      QUERY_CACHE_TTL_SECONDS: '0',
      // Everything the miners hold for a label fits one collection: the dataset is checked whole.
      TASK_COLLECT_LIMIT: '1000',
    };
    app = await startTestApp(env);
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
    await dropDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const get = (path: string) => app.http.get(`/api/v1/${path}`).set('X-API-Key', TEST_MASTER_KEY);
  const register = (id: string, label: string, platform: 'x' | 'reddit' = 'x') =>
    registerTask(app.app, '5ValidatorHotkeyForTasks', id, label, platform);
  /** Ends the task's seven days now, without moving the clock the other tasks share. */
  const expireNow = (id: string) =>
    app.app
      .get(DataSource)
      .query('UPDATE scraping_tasks SET expires_at = registered_at WHERE id = $1', [id]);
  /** The body as the exact bytes sent. */
  const download = (path: string) => asBytes(get(path));

  it('runs a task from registration to a downloadable dataset of what miners served', async () => {
    await register('bitcoin-x', '#bitcoin');
    const registered = (await get('tasks/bitcoin-x').expect(200)).body;
    expect(registered).toMatchObject({
      id: 'bitcoin-x',
      state: 'active',
      params: { platform: 'x', label: '#bitcoin' },
      progress: { items_collected: 0 },
    });
    expect(Date.parse(registered.expires_at) - Date.parse(registered.registered_at)).toBe(7 * DAY);
    const early = await get('tasks/bitcoin-x/dataset').expect(409);
    expect(early.body.detail).toContain('active');

    const lifecycle = app.app.get(TaskLifecycleService);
    const clock = app.app.get(Clock);
    expect(await lifecycle.runOnce()).toEqual({ collected: 1, compiled: 0 });
    const collected = (await get('tasks/bitcoin-x').expect(200)).body.progress.items_collected;
    expect(collected).toBeGreaterThan(0);

    // Not due again within the collection interval; due an hour later, and deduplicated by uri.
    expect(await lifecycle.runOnce()).toEqual({ collected: 0, compiled: 0 });
    clock.advance(3600 * 1000);
    expect(await lifecycle.runOnce()).toEqual({ collected: 1, compiled: 0 });
    expect((await get('tasks/bitcoin-x').expect(200)).body.progress).toMatchObject({
      items_collected: collected,
      collections: 2,
    });

    clock.advance(7 * DAY);
    expect(await lifecycle.runOnce()).toEqual({ collected: 0, compiled: 1 });
    const completed = (await get('tasks/bitcoin-x').expect(200)).body;
    expect(completed.state).toBe('completed');
    expect(completed.dataset).toMatchObject({
      rows: collected,
      content_type: 'application/gzip',
      download_url: '/api/v1/tasks/bitcoin-x/dataset',
    });

    const download = await asBytes(get('tasks/bitcoin-x/dataset')).expect(200);
    const file = download.body as Buffer;
    expect(download.headers['content-type']).toBe('application/gzip');
    expect(Number(download.headers['content-length'])).toBe(file.length);
    expect(download.headers['x-content-sha256']).toBe(
      createHash('sha256').update(file).digest('hex'),
    );
    expect(completed.dataset.sha256).toBe(download.headers['x-content-sha256']);

    const rows = jsonLines<DataItem>(file);
    expect(rows).toHaveLength(collected);
    const expected = network.devnet.corpus.items.filter((item) =>
      matchesPlainly(item, { source: 'X', keywords: ['#bitcoin'] }),
    );
    expect(new Set(rows.map((row) => row.uri))).toEqual(new Set(expected.map((item) => item.uri)));
    const times = rows.map((row) => Date.parse(row.datetime));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const listed = (await get('tasks?state=completed').expect(200)).body.tasks.map(
      (task: { id: string }) => task.id,
    );
    expect(listed).toContain('bitcoin-x');

    // A pipeline polling for new datasets: what completed since it last looked, and nothing again.
    expect(registered.completed_at).toBeNull();
    // Compiled at expiry, by the clock the test moved past it.
    expect(Date.parse(completed.completed_at)).toBeGreaterThanOrEqual(
      Date.parse(completed.expires_at),
    );
    expect(Date.parse(completed.completed_at)).toBeLessThanOrEqual(clock.now().getTime());
    const since = await get(
      `tasks?completed_after=${encodeURIComponent(registered.registered_at)}`,
    ).expect(200);
    expect(since.body.tasks.map((task: { id: string }) => task.id)).toEqual(['bitcoin-x']);
    expect(since.headers['x-total-count']).toBe('1');
    const again = await get(
      `tasks?completed_after=${encodeURIComponent(completed.completed_at)}`,
    ).expect(200);
    expect(again.body.tasks).toEqual([]);
    expect(again.headers['x-total-count']).toBe('0');
  });

  it('answers 404 for an unknown task and its dataset', async () => {
    await get('tasks/nope').expect(404);
    await get('tasks/nope/dataset').expect(404);
  });

  it('validates the list filter', async () => {
    const response = await get('tasks?state=finished').expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'state'], type: 'enum' }),
    ]);
    // An instant needs its UTC offset: a bare date or a zoneless time would be read as UTC.
    for (const value of ['2026-11-24', '2026-11-24T12:00:00', 'yesterday']) {
      const refused = await get(`tasks?completed_after=${value}`).expect(422);
      expect(refused.body.detail).toEqual([
        {
          loc: ['query', 'completed_after'],
          msg:
            'Value error, must be a date-time YYYY-MM-DDTHH:MM:SS[.fraction] (up to 9 fraction ' +
            'digits) with its UTC offset, Z or ±HH:MM, e.g. 2099-12-31T23:59:59Z',
          type: 'value_error',
        },
      ]);
    }
    // An offset's `+` sent unencoded is read as a space: the refusal says so, and %2B is read.
    const plus = await get('tasks?completed_after=2026-12-11T20:30:56.600+01:00').expect(422);
    expect(plus.body.detail).toEqual([
      {
        loc: ['query', 'completed_after'],
        msg:
          'Value error, must be a date-time YYYY-MM-DDTHH:MM:SS[.fraction] (up to 9 fraction ' +
          "digits) with its UTC offset, Z or ±HH:MM, e.g. 2099-12-31T23:59:59Z; a '+' in a " +
          'query string reads as a space: send it as %2B',
        type: 'value_error',
      },
    ]);
    await get('tasks?completed_after=2026-12-11T20:30:56.600%2B01:00').expect(200);
  });

  it('finishes a compile interrupted by a restart, never serving the half-written file', async () => {
    await register('ai-x', '#ai');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.collectDue();
    // The crash: the task is left compiling with a half-written file on disk.
    await app.app
      .get(DataSource)
      .query(`UPDATE scraping_tasks SET state = 'compiling' WHERE id = 'ai-x'`);
    const path = datasetPath(dataDir, 'ai-x');
    // Partial files are named per writer; this one has not been written to for hours.
    const partial = `${path}.${randomUUID()}.partial`;
    const hoursAgo = new Date(Date.now() - 3 * 3_600_000);
    writeFileSync(partial, 'half a file');
    utimesSync(partial, hoursAgo, hoursAgo);
    // The crash a moment ago: its writer's partial file is fresh at the restart.
    const fresh = `${path}.${randomUUID()}.partial`;
    writeFileSync(fresh, 'half a file');
    await get('tasks/ai-x/dataset').expect(409);
    await app.close();

    app = await startTestApp(env);
    expect((await get('tasks/ai-x').expect(200)).body.state).toBe('compiling');
    const restarted = app.app.get(TaskLifecycleService);
    await restarted.runOnce();
    const task = (await get('tasks/ai-x').expect(200)).body;
    expect(task.state).toBe('completed');
    expect(existsSync(partial)).toBe(false);
    const download = await get('tasks/ai-x/dataset').expect(200);
    expect(download.headers['x-content-sha256']).toBe(task.dataset.sha256);
    // Kept while its writer may be alive; removed by a later pass once an hour old, although
    // the task completed and is never compiled again (it stayed for good: an audit's finding).
    expect(existsSync(fresh)).toBe(true);
    utimesSync(fresh, hoursAgo, hoursAgo);
    await restarted.runOnce();
    expect(existsSync(fresh)).toBe(false);
  });

  it('compiles and serves the dataset of an id too long, percent-encoded, for a file name', async () => {
    // 80 characters, as job ids may have: 556 bytes percent-encoded, over a file name's 255.
    // The emoji is one character of two UTF-16 units: one `_` in `filename` (it was two).
    const id = `wé ird "id" ${'é'.repeat(27)}🚀${'数据'.repeat(20)}`;
    await register(id, '#bitcoin');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.collectDue();
    await expireNow(id);
    await lifecycle.compileExpired();

    const path = `tasks/${encodeURIComponent(id)}`;
    const task = (await get(path).expect(200)).body;
    expect(task).toMatchObject({ id, state: 'completed' });
    expect(task).not.toHaveProperty('failure_reason');
    expect(basename(datasetPath(dataDir, id))).toMatch(/^sha256=[0-9a-f]{64}\.jsonl\.gz$/);
    const jsonl = await download(`${path}/dataset`).expect(200);
    expect(jsonl.headers['x-content-sha256']).toBe(task.dataset.sha256);
    expect(
      gunzipSync(jsonl.body as Buffer)
        .toString('utf8')
        .split('\n'),
    ).toHaveLength(task.dataset.rows + 1);
    const parquet = await download(`${path}/dataset?format=parquet`).expect(200);
    expect(parquet.headers['x-content-sha256']).toBe(task.dataset.parquet.sha256);
    // Named by the id: in ASCII (`_` for the rest) for every client, as it is in filename*.
    const ascii = `w_ ird \\"id\\" ${'_'.repeat(68)}`;
    for (const [response, extension] of [
      [jsonl, 'jsonl.gz'],
      [parquet, 'parquet'],
    ] as const)
      expect(response.headers['content-disposition']).toBe(
        `attachment; filename="${ascii}.${extension}"; ` +
          `filename*=UTF-8''${encodeURIComponent(id)}.${extension}`,
      );
    // Ids whose names fit keep them: the datasets compiled before are where they were.
    expect(basename(datasetPath(dataDir, 'bitcoin-x'))).toBe('bitcoin-x.jsonl.gz');
    expect(basename(datasetPath(dataDir, 'é'.repeat(31)))).toBe(
      `${encodeURIComponent('é'.repeat(31))}.jsonl.gz`,
    );
  });

  it("says why a compile failed without naming the server's directories", async () => {
    await register('no-room-x', '#ai');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.collectDue();
    await expireNow('no-room-x');
    // A file where the datasets directory should be: writing any dataset fails.
    const directory = join(dataDir, 'datasets');
    renameSync(directory, `${directory}-aside`);
    writeFileSync(directory, '');
    try {
      await lifecycle.compileExpired();
    } finally {
      rmSync(directory);
      renameSync(`${directory}-aside`, directory);
    }
    const task = (await get('tasks/no-room-x').expect(200)).body;
    expect(task.state).toBe('compiling');
    expect(task.failure_reason).toBe("EEXIST: file already exists, mkdir 'datasets'");
  });
});
