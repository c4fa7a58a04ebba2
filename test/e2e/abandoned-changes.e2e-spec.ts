import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, QueryRunner } from 'typeorm';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { createKey } from '../support/fixtures';
import { LogCapture } from '../support/log-capture';
import { sendAndLeave } from '../support/send-and-leave';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { until } from '../support/until';

// A retry audit: a change held up in the database went on after its client had given up, and
// landed after the newer change the client sent next (a corrected vote, another limit), replacing
// it. A change whose client has left is now rolled back before it commits.

describe('A change whose client left before it was stored', () => {
  const HOTKEY_URI = '//AbandonedChanges';
  const HOTKEY = Sr25519Keypair.fromUri(HOTKEY_URI).address;
  const capture = new LogCapture();
  let directory: string;
  let app: TestApp;
  let database: DataSource;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'gateway-abandoned-'));
    app = await startTestApp(
      {
        DATA_DIR: directory,
        TASK_LIFECYCLE_TICK: '86400',
        VALIDATOR_HOTKEY_URI: HOTKEY_URI,
        // The request's line tells when the server has seen the client go.
        LOG_LEVEL: 'info',
      },
      { ownDatabase: true, logDestination: capture },
    );
    database = app.app.get(DataSource);
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /**
   * Runs `hold` in a transaction of its own, sends `path` with `body` from a client that leaves
   * after 300 ms while the hold lasts, then ends the hold; resolves with what the server warned
   * of the change once it has finished with it.
   */
  async function abandon(
    hold: (runner: QueryRunner) => Promise<unknown>,
    method: 'POST' | 'PATCH',
    path: string,
    body: unknown,
    key = TEST_MASTER_KEY,
  ): Promise<string[]> {
    const before = notMade().length;
    const runner = database.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const requestId = `abandoned-${Math.random().toString(36).slice(2)}`;
    try {
      await hold(runner);
      const json = JSON.stringify(body);
      await sendAndLeave(
        Number(new URL(app.url).port),
        `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n` +
          `X-Request-Id: ${requestId}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
        300,
      );
      // The server has seen the client go (its request's line), while the change still waits.
      await until(async () => (requestLine(requestId) ? true : undefined), 5000);
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    // The change's own warning: written once its transaction has ended, rolled back.
    await until(async () => (notMade().length > before ? true : undefined), 5000);
    return notMade().slice(before);
  }

  const requestLine = (id: string) =>
    capture
      .lines<{ req?: { id?: string }; msg?: string }>()
      .find(
        (line) =>
          line.req?.id === id && line.msg?.includes('closed before the answer was complete'),
      );
  const NOT_MADE = 'not made, its connection closed before it was stored: ';
  const notMade = () =>
    capture
      .lines<{ msg?: string }>()
      .flatMap((line) => (line.msg?.startsWith(NOT_MADE) ? [line.msg] : []));
  const vote = (label: string) => ({
    desirabilities: [{ id: `job-${label.slice(1)}`, weight: 1, params: { platform: 'x', label } }],
  });
  const storedVote = async () =>
    JSON.stringify(
      (
        await app.http
          .get(`/api/v1/get_desirabilities?hotkey=${HOTKEY}`)
          .set('X-API-Key', TEST_MASTER_KEY)
          .expect(200)
      ).body,
    );
  const tasksLabelled = (label: string) =>
    database.query('SELECT id FROM scraping_tasks WHERE label = $1', [label]);

  it('does not apply a key change whose client gave up while it waited', async () => {
    const { id } = await createKey(app, { rate_limit: 5 });
    const warned = await abandon(
      (runner) => runner.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [id]),
      'PATCH',
      `/api/v1/keys/${id}`,
      { rate_limit: 10 },
    );
    expect(warned).toEqual([`${NOT_MADE}a change of key ${id}`]);
    const [row] = await database.query('SELECT rate_limit FROM api_keys WHERE id = $1', [id]);
    expect(row.rate_limit).toBe(5);
    // A client that waits has its change made, after as before.
    await app.http
      .patch(`/api/v1/keys/${id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ rate_limit: 20 })
      .expect(200);
  });

  it('does not create a key whose client gave up while it waited', async () => {
    const warned = await abandon(
      (runner) => runner.query('LOCK TABLE api_keys IN EXCLUSIVE MODE'),
      'POST',
      '/api/v1/keys',
      { name: 'given up on' },
    );
    expect(warned).toEqual([`${NOT_MADE}a new key`]);
    const rows = await database.query("SELECT id FROM api_keys WHERE name = 'given up on'");
    expect(rows).toEqual([]);
  });

  it('does not store a vote whose client gave up while it waited, nor replace the vote before it', async () => {
    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send(vote('#kept'))
      .expect(200);
    const warned = await abandon(
      // The registration lock every vote takes.
      (runner) => app.app.get(TasksRepository).lockRegistrations(runner.manager),
      'POST',
      '/api/v1/set_desirabilities',
      vote('#abandoned'),
    );
    expect(warned).toEqual([`${NOT_MADE}the vote of ${HOTKEY}`]);
    expect(await storedVote()).toContain('#kept');
    expect(await storedVote()).not.toContain('#abandoned');
    expect(await tasksLabelled('#abandoned')).toEqual([]);
  });

  // A key not cached is looked up in the guards, before the handler asks whether its client is
  // still there: a client gone by then had sent its close already (a review's finding).
  it('does not store a vote whose client gave up while its key was looked up', async () => {
    const { key } = await createKey(app, { tier: 'validator' });
    const warned = await abandon(
      (runner) => runner.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE'),
      'POST',
      '/api/v1/set_desirabilities',
      vote('#looked-up'),
      key,
    );
    expect(warned).toEqual([`${NOT_MADE}the vote of ${HOTKEY}`]);
    expect(await storedVote()).not.toContain('#looked-up');
    expect(await tasksLabelled('#looked-up')).toEqual([]);
  });
});
