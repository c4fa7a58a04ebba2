import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { createKey } from '../support/fixtures';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { registerTask } from '../support/tasks';
import { asBytes, jsonLines } from '../support/downloads';
import { answeredItem } from '../../src/network/answered-items';
import { DataItem } from '../../src/network/protocol';

const HOUR = 3_600_000;

describe('Recompiling a failed task', () => {
  let network: TestNetwork;
  let dataDir: string;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(3);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-recompile-'));
    app = await startTestApp(
      {
        ...network.env,
        DATA_DIR: dataDir,
        QUERY_MINERS: '3',
        QUERY_QUORUM: '3',
        QUERY_CACHE_TTL_SECONDS: '0',
        TASK_COLLECT_LIMIT: '1000',
      },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const database = () => app.app.get(DataSource);
  const get = (path: string) => app.http.get(`/api/v1/${path}`).set('X-API-Key', TEST_MASTER_KEY);
  const recompile = (id: string, key = TEST_MASTER_KEY) =>
    app.http.post(`/api/v1/tasks/${encodeURIComponent(id)}/recompile`).set('X-API-Key', key);
  const register = (id: string) =>
    registerTask(app.app, '5ValidatorHotkeyForTasks', id, '#bitcoin');
  /** A task registered and collected once, its seven days over: the next compile is its. */
  const collectedAndExpired = async (id: string) => {
    await register(id);
    await app.app.get(TaskLifecycleService).collectDue();
    await database().query('UPDATE scraping_tasks SET expires_at = registered_at WHERE id = $1', [
      id,
    ]);
  };
  /** The task as stored, for what the API does not show. */
  const row = async (id: string) =>
    (
      await database().query<
        { state: string; compile_attempts: number; compile_failed_at: Date | null }[]
      >('SELECT state, compile_attempts, compile_failed_at FROM scraping_tasks WHERE id = $1', [id])
    )[0];
  /** A task failed as the compiler leaves one, without running its compiles. */
  const failedTask = async (id: string) => {
    await register(id);
    await database().query(
      `UPDATE scraping_tasks SET state = 'failed', compile_attempts = 3, compile_failed_at = now(),
         failure_reason = 'ENOSPC: no space left on device' WHERE id = $1`,
      [id],
    );
  };

  it('sends a task whose compiles failed back to compiling, and the next pass compiles the items it kept', async () => {
    await collectedAndExpired('stuck-x');
    const lifecycle = app.app.get(TaskLifecycleService);
    const clock = app.app.get(Clock);
    // A full disk, as the operator found it three hours too late: a file where the datasets
    // directory should be (none is written yet) fails every attempt, an hour, then two hours
    // apart.
    const directory = join(dataDir, 'datasets');
    writeFileSync(directory, '');
    try {
      await lifecycle.compileExpired();
      clock.advance(HOUR);
      await lifecycle.compileExpired();
      clock.advance(2 * HOUR);
      await lifecycle.compileExpired();
    } finally {
      rmSync(directory);
    }
    const failed = (await get('tasks/stuck-x').expect(200)).body;
    expect(failed).toMatchObject({
      state: 'failed',
      failure_reason: "EEXIST: file already exists, mkdir 'datasets'",
    });
    await get('tasks/stuck-x/dataset').expect(410);
    const stored = await database().query<{ item: DataItem }[]>(
      'SELECT item FROM task_items WHERE task_id = $1 ORDER BY datetime, uri',
      ['stuck-x'],
    );
    expect(stored.length).toBeGreaterThan(0);

    const answer = await recompile('stuck-x').expect(202);
    // The task as GET shows it: compiling, its last failure still said until a compile succeeds.
    expect(answer.body).toEqual((await get('tasks/stuck-x').expect(200)).body);
    expect(answer.body).toMatchObject({
      id: 'stuck-x',
      state: 'compiling',
      failure_reason: "EEXIST: file already exists, mkdir 'datasets'",
    });
    expect(await row('stuck-x')).toEqual({
      state: 'compiling',
      compile_attempts: 0,
      compile_failed_at: null,
    });
    await get('tasks/stuck-x/dataset').expect(409);

    // At once, without the clock moving: no backoff is left from the failures.
    expect((await lifecycle.runOnce()).compiled).toBe(1);
    const completed = (await get('tasks/stuck-x').expect(200)).body;
    expect(completed.state).toBe('completed');
    expect(completed).not.toHaveProperty('failure_reason');
    expect(completed.dataset.rows).toBe(stored.length);
    const download = await asBytes(get('tasks/stuck-x/dataset')).expect(200);
    const rows = jsonLines(download.body as Buffer);
    // The items kept, as the dataset's lines answer them (answeredItem: the hosted API's dates).
    expect(rows).toEqual(stored.map((item) => answeredItem(item.item)));
  });

  it('answers 404 for an unknown task', async () => {
    const response = await recompile('nope').expect(404);
    expect(response.body.detail).toBe("Task 'nope' not found");
    // No task's id holds U+0000 (Postgres text cannot), and none is asked for one.
    await recompile('a\u0000b').expect(404);
  });

  it('refuses a task that has not failed with a 409 naming its state, and leaves it as it was', async () => {
    await register('not-failed');
    for (const state of ['active', 'compiling', 'completed']) {
      await database().query('UPDATE scraping_tasks SET state = $2 WHERE id = $1', [
        'not-failed',
        state,
      ]);
      const response = await recompile('not-failed').expect(409);
      expect(response.body.detail).toBe(
        `Task 'not-failed' is ${state}; only a failed task can be recompiled`,
      );
      expect((await row('not-failed')).state).toBe(state);
    }
  });

  it('refuses any key but the master key with a 403', async () => {
    await failedTask('not-yours');
    for (const tier of ['regular', 'validator'] as const) {
      const { key } = await createKey(app, { tier });
      const response = await recompile('not-yours', key).expect(403);
      expect(response.body.detail).toBe('This operation requires the master key');
    }
    expect((await row('not-yours')).state).toBe('failed');
  });

  it('sends a task back once when two calls race: the other is told it is compiling', async () => {
    for (const id of ['raced-1', 'raced-2', 'raced-3']) {
      await failedTask(id);
      const answers = await Promise.all([recompile(id), recompile(id)]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
      const refused = answers.find((answer) => answer.status === 409)!;
      expect(refused.body.detail).toBe(
        `Task '${id}' is compiling; only a failed task can be recompiled`,
      );
      expect(await row(id)).toEqual({
        state: 'compiling',
        compile_attempts: 0,
        compile_failed_at: null,
      });
    }
  });
});
