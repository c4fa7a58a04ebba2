import { setTimeout as sleep } from 'node:timers/promises';
import { onServer } from '../support/database';
import { LogCapture } from '../support/log-capture';
import { eventually } from '../support/metrics';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/** Past the 0.5 s key cache: every request below opens a connection of its own. */
const SETTLE_MS = 1500;

interface Line {
  level: number;
  context?: string;
  msg: string;
  answered_503?: number;
  req?: unknown;
  res?: { statusCode: number };
}

/*
 * What the log says of a database out of reach (DatabaseOutageLog), read from the app's own lines,
 * its lines outside any request included. A file of its own: nestjs-pino writes those lines
 * through the first app a process starts (one logger for them per process), so only a file's
 * first app has them in its capture. The outage is the database's, on the run's server:
 * `ALLOW_CONNECTIONS false` (as while it is restored or moved) and its sessions ended, or its name
 * taken away.
 */
describe('The log of a database out of reach', () => {
  const capture = new LogCapture();
  let app: TestApp;
  let name: string;

  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: 'info' }, { logDestination: capture, ownDatabase: true });
    name = new URL(app.config.databaseUrl).pathname.slice(1);
  });
  afterAll(() => app?.close());

  const sql = (...statements: string[]) =>
    onServer(app.config.databaseUrl, async (client) => {
      for (const statement of statements) await client.query(statement);
    });
  /** Its sessions ended, and no new one taken. */
  const shutOut = (database: string) =>
    sql(
      `ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS false`,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}'`,
    );
  const letIn = (database: string) =>
    sql(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS true`);
  const keys = () => app.http.get('/api/v1/keys').set('X-API-Key', TEST_MASTER_KEY);
  const outageLines = () =>
    capture.lines<Line>().filter((line) => line.context === 'AllExceptionsFilter');

  // Health, system-status and /metrics ran the only probe that ended an outage's log: on a replica
  // nothing asked them of, the recovery went unsaid and the next outage counted on from this one.
  it('logs the recovery with no request, as no request’s line, and counts the next outage afresh', async () => {
    await keys().expect(200);
    await shutOut(name);
    try {
      await eventually(async () => expect((await keys()).status).toBe(503));
    } finally {
      await letIn(name);
    }
    const back = Date.now();
    // Nothing is asked of the app now: its own probe must notice.
    await eventually(() => {
      expect(outageLines().at(-1)?.msg).toMatch(/^database reachable again after \d+ s/);
      return Promise.resolve();
    }, 15_000);
    console.log(`recovery logged ${Date.now() - back} ms after the database was back, unasked`);
    // The outage's line, not a request's: it carried the first 503's `req` (an operator audit).
    expect(outageLines().at(-1)).not.toHaveProperty('req');

    await shutOut(name);
    try {
      await eventually(async () => expect((await keys()).status).toBe(503));
    } finally {
      await letIn(name);
    }
    const starts = outageLines().filter((line) => line.msg.startsWith('database unavailable'));
    expect(starts.at(-1)).toMatchObject({ answered_503: 1 });
    expect(starts.at(-1)?.msg).not.toContain('since the last line');
    // Over before the next test's outage, which its first line must open.
    await eventually(() => {
      expect(outageLines().at(-1)?.msg).toMatch(/^database reachable again after \d+ s/);
      return Promise.resolve();
    }, 15_000);
  }, 60_000);

  // Health's unhealthy report is a 503 of the outage too, and went uncounted: the recovery line
  // said half the 503s that a balancer's checks and the clients met (a log-volume audit).
  it('counts health’s 503 answers in the outage’s lines, with every other 503', async () => {
    const health = () => app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY);
    await keys().expect(200);
    const from = capture.lines<Line>().length;
    let answered503 = 0;
    const counted = async (request: ReturnType<typeof keys>) => {
      const answer = await request;
      if (answer.status === 503) answered503++;
      return answer;
    };
    await shutOut(name);
    try {
      await eventually(async () => expect((await counted(health())).status).toBe(503));
      for (let round = 0; round < 3; round++) {
        expect((await counted(health())).status).toBe(503);
        expect((await counted(keys())).status).toBe(503);
      }
    } finally {
      await letIn(name);
    }
    const recovery = await eventually(() => {
      const line = capture
        .lines<Line>()
        .slice(from)
        .find((line) => line.msg.startsWith('database reachable again'));
      expect(line).toBeDefined();
      return Promise.resolve(line!);
    }, 15_000);
    expect(answered503).toBeGreaterThanOrEqual(7);
    expect(recovery).toMatchObject({ answered_503: answered503 });
  }, 60_000);

  // Refused only as a connection is made, once the service runs: 500s with stacks, and no outage
  // in the log, before (an operator audit's finding). A rotated password (class 28) takes the
  // same path, which a server trusting every local connection cannot show.
  it('answers 503, not 500, while its database is renamed away (3D000), and 200 once it is back', async () => {
    const requests = () => [
      keys(),
      app.http.get('/api/v1/get_top_labels_by_source/x').set('X-API-Key', TEST_MASTER_KEY),
    ];
    for (const answer of await Promise.all(requests())) expect(answer.status).toBe(200);
    const from = capture.lines<Line>().length;
    await shutOut(name);
    await sql(`ALTER DATABASE "${name}" RENAME TO "${name}_off"`);
    await letIn(`${name}_off`);
    try {
      await sleep(SETTLE_MS);
      for (let round = 0; round < 3; round++)
        for (const answer of await Promise.all(requests())) {
          expect(answer.status).toBe(503);
          expect(answer.headers['retry-after']).toBe('5');
        }
    } finally {
      await sql(`ALTER DATABASE "${name}_off" RENAME TO "${name}"`);
    }
    await eventually(async () => {
      for (const answer of await Promise.all(requests())) expect(answer.status).toBe(200);
    });
    const lines = capture.lines<Line>().slice(from);
    // Each request's own line stays (at error, as every 5xx's); no 500, and no error of its own.
    expect(lines.filter((line) => line.res?.statusCode === 500)).toEqual([]);
    expect(lines.filter((line) => line.level >= 50 && !line.res)).toEqual([]);
    expect(
      lines.some(
        (line) =>
          line.context === 'AllExceptionsFilter' &&
          line.msg.startsWith(`database unavailable: database "${name}" does not exist`),
      ),
    ).toBe(true);
  }, 60_000);
});
