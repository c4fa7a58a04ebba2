import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

const ROOT = ['body', 'desirabilities'];
/**
 * A job of its own label: jobs with the same params are one task, refused twice in a submission.
 */
const xJob = (id: string, weight = 1) => ({
  id,
  weight,
  params: { platform: 'x', label: `#${id.replace(/[^a-z0-9]/gi, '')}` },
});

/** Bounds of a submission and paging of the aggregate, with small limits set by the test. */
describe('Desirability limits and paging', () => {
  let directory: string;
  let app: TestApp;
  let database: DataSource;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'gateway-limits-'));
    const owner = join(directory, 'owner.json');
    writeFileSync(owner, JSON.stringify([xJob('owner-only', 1)]));
    app = await startTestApp(
      {
        DEFAULT_DESIRABILITIES_FILE: owner,
        DATA_DIR: directory,
        TASK_LIFECYCLE_TICK: '86400',
        DESIRABILITY_MAX_JOBS: '5',
        DESIRABILITY_MAX_ACTIVE_TASKS: '8',
      },
      { ownDatabase: true },
    );
    database = app.app.get(DataSource);
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const submit = (desirabilities: unknown[]) =>
    app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ desirabilities });
  const taskCount = async () =>
    (await database.query<{ n: number }[]>('SELECT count(*)::int AS n FROM scraping_tasks'))[0].n;

  it('refuses more jobs than DESIRABILITY_MAX_JOBS, legacy labels counting as jobs', async () => {
    const labels = Object.fromEntries(['#a', '#b', '#c', '#d'].map((label) => [label, 1]));
    const answer = await submit([
      xJob('one'),
      xJob('two'),
      { source_name: 'x', label_weights: labels },
    ]).expect(422);
    expect(answer.body.detail).toEqual([
      {
        loc: ROOT,
        msg: 'List should have at most 5 jobs after validation, not 6 (each label of a legacy entry is a job)',
        type: 'too_long',
        ctx: { field_type: 'List', max_length: 5, actual_length: 6 },
      },
    ]);
    expect(await taskCount()).toBe(0);
  });

  it('refuses ids with control characters, at the id', async () => {
    const answer = await submit([xJob('fine'), xJob('crlf\r\nX-Injected: 1')]).expect(422);
    expect(answer.body.detail).toEqual([
      {
        loc: [...ROOT, 1, 'id'],
        msg: 'Value error, id must be printable: no control characters (CR, LF, TAB, …)',
        type: 'value_error',
      },
    ]);
    await submit([xJob('tab\there')]).expect(422);
    expect(await taskCount()).toBe(0);
  });

  it('refuses going over DESIRABILITY_MAX_ACTIVE_TASKS for the hotkey, storing nothing', async () => {
    await submit(['a', 'b', 'c', 'd', 'e'].map((id) => xJob(`first-${id}`))).expect(200);
    // The five are re-submitted (not new) beside three new ones: 8, the limit.
    const eight = ['a', 'b', 'c', 'd', 'e'].map((id) => xJob(`first-${id}`));
    await submit([...eight.slice(0, 2), xJob('new-1'), xJob('new-2'), xJob('new-3')]).expect(200);
    const over = await submit([xJob('new-4')]).expect(422);
    expect(over.body.detail).toEqual([
      {
        loc: ROOT,
        msg: expect.stringMatching(
          /^Value error, 1 new tasks would make 9 active tasks for hotkey 5\w+; at most 8 may be active at once/,
        ),
        type: 'value_error',
      },
    ]);
    expect(await taskCount()).toBe(8);
  });

  it('pages the aggregate heaviest first, stable, with the total in X-Total-Count', async () => {
    // Tasks registered above, now weighted 1..5 (the active-task limit is reached).
    const ids = ['a', 'b', 'c', 'd', 'e'];
    await submit(ids.map((id, index) => xJob(`first-${id}`, index + 1))).expect(200);
    const page = (query: string) =>
      app.http.get(`/api/v1/get_desirabilities${query}`).set('X-API-Key', TEST_MASTER_KEY);
    const all = await page('?limit=1000').expect(200);
    expect(all.headers['x-total-count']).toBe(String(all.body.length));
    const listed = (all.body as { id: string; weight: number }[]).map((job) => job.id);
    const weights = (all.body as { weight: number }[]).map((job) => job.weight);
    expect(weights).toEqual([...weights].sort((a, b) => b - a));
    const first = await page('?limit=2').expect(200);
    const second = await page('?limit=2&offset=2').expect(200);
    expect([...first.body, ...second.body].map((job: { id: string }) => job.id)).toEqual(
      listed.slice(0, 4),
    );
    expect(second.headers['x-total-count']).toBe(String(listed.length));
    const legacy = await page('?format=legacy&limit=1').expect(200);
    expect(legacy.body).toHaveLength(1);
    expect(legacy.headers['x-total-count']).toBe(String(all.body.length));
    const refused = await page('?limit=1001').expect(422);
    expect(refused.body.detail[0]).toMatchObject({ loc: ['query', 'limit'] });
  });

  it('quotes a long unknown task id by its start only', async () => {
    const id = 'x'.repeat(15_000);
    const answer = await app.http
      .get(`/api/v1/tasks/${id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(404);
    expect(answer.body.detail).toBe(`Task '${'x'.repeat(40)}…' not found`);
  });
});
