import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { JobRunner } from '../../src/common/jobs/job-runner';
import { JobRunsRepository } from '../../src/common/jobs/job-runs.repository';
import { PeriodicJob } from '../../src/common/jobs/periodic-job';
import { MetricsService } from '../../src/common/metrics/metrics.service';
import { FIRST_RETRY_MS } from '../../src/common/retry-delay';
import { sample } from '../support/prometheus-text';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const HOUR = 3_600_000;

/**
 * The job runner against Postgres, two replicas sharing one database: a job runs on one at a
 * time, once per interval, and its run is recorded whether it succeeds or fails; whatever
 * happens, the connection it held goes back and the job is left unlocked.
 */
describe('JobRunner across replicas', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let replicaA: JobRunner;
  let replicaB: JobRunner;
  let second: DataSource;
  let metricsA: MetricsService;

  const jobRun = async (name: string) =>
    (
      await database.query<{ status: string; details: unknown; finished: boolean }[]>(
        `SELECT status, details, finished_at IS NOT NULL AS finished FROM job_runs WHERE name = $1`,
        [name],
      )
    )[0];
  /** Advisory locks held in this database, by any session. */
  const advisoryLocks = async () =>
    Number(
      (
        await database.query<{ held: string }[]>(
          `SELECT count(*) AS held FROM pg_locks
           WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
      )[0].held,
    );
  /** Connections taken from both replicas' pools and not given back. */
  const checkedOut = () =>
    [database, second]
      .map((source) => (source.driver as unknown as { master: Pool }).master)
      .reduce((sum, pool) => sum + pool.totalCount - pool.idleCount, 0);
  const finishedAt = async (name: string) =>
    (
      await database.query<{ finished_at: Date }[]>(
        'SELECT finished_at FROM job_runs WHERE name = $1',
        [name],
      )
    )[0].finished_at;
  /** The last run of `name` started `startedMinutes` ago and finished `finishedMinutes` ago. */
  const ranAgo = (name: string, startedMinutes: number, finishedMinutes = startedMinutes) =>
    database.query(
      `INSERT INTO job_runs (name, started_at, finished_at, status, counted_at)
       VALUES ($1, now() - make_interval(mins => $2), now() - make_interval(mins => $3), 'succeeded',
         now() - make_interval(mins => $2))
       ON CONFLICT (name) DO UPDATE
       SET started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at,
         status = EXCLUDED.status, counted_at = EXCLUDED.counted_at`,
      [name, startedMinutes, finishedMinutes],
    );
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /**
   * Replica A's next connection refuses its statements that match `statement` (and `parameter`).
   */
  const nextConnectionRefuses = (statement: RegExp, parameter?: string) => {
    const create = database.createQueryRunner.bind(database);
    jest.spyOn(database, 'createQueryRunner').mockImplementationOnce((...args) => {
      const runner: QueryRunner = create(...args);
      const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
      runner.query = ((text: string, parameters?: unknown[]) =>
        statement.test(text) && (parameter === undefined || (parameters ?? []).includes(parameter))
          ? Promise.reject(new Error(`refused: ${text}`))
          : query(text, parameters)) as QueryRunner['query'];
      return runner;
    });
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'jobs' });
    database = medium.dataSource;
    // The second replica has a pool of its own, as another process would.
    second = new DataSource(database.options);
    await second.initialize();
    metricsA = new MetricsService();
    replicaA = new JobRunner(new JobRunsRepository(database), metricsA);
    replicaB = new JobRunner(new JobRunsRepository(second), new MetricsService());
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    expect(checkedOut()).toBe(0);
    expect(await advisoryLocks()).toBe(0);
  });
  afterAll(async () => {
    await second.destroy();
    await medium.close();
  });

  it('runs a job once per interval, whichever replica asks, and records its result', async () => {
    expect(await replicaA.runOnce('hourly', HOUR, async () => ({ rows: 3 }))).toEqual({
      ran: true,
      result: { rows: 3 },
    });
    expect(await jobRun('hourly')).toEqual({
      status: 'succeeded',
      details: { rows: 3 },
      finished: true,
    });
    const run = jest.fn(async () => ({}));
    expect(await replicaB.runOnce('hourly', HOUR, run)).toMatchObject({
      ran: false,
      skipped: 'not_due',
    });
    expect(run).not.toHaveBeenCalled();
    // An interval shorter than the time since the last run: due again.
    expect(await replicaB.runOnce('hourly', 1, run)).toEqual({ ran: true, result: {} });
  });

  it('counts a run for nine tenths of its interval: a timer firing a little early skips it', async () => {
    await ranAgo('early', 53);
    expect(await replicaA.runOnce('early', HOUR, async () => 'ran')).toMatchObject({
      ran: false,
      skipped: 'not_due',
    });
    await ranAgo('early', 55);
    expect(await replicaA.runOnce('early', HOUR, async () => 'ran')).toEqual({
      ran: true,
      result: 'ran',
    });
  });

  it('counts the interval from the start of the last run: a long run leaves the next tick due', async () => {
    await ranAgo('long', 59, 1);
    expect(await replicaA.runOnce('long', HOUR, async () => 'ran')).toEqual({
      ran: true,
      result: 'ran',
    });
    // The run that just started counts for the interval however soon it ends.
    expect(await replicaB.runOnce('long', HOUR, async () => 'twice')).toMatchObject({
      ran: false,
      skipped: 'not_due',
    });
  });

  // A job whose run takes a fifth of its interval, ticking on replica A (a minute's tick and a
  // 12-second pass, scaled down); replica B's tick comes right after each of A's runs.
  it('runs a job at every tick however long its run, and not again on the other replica', async () => {
    const interval = 2_000;
    const runs: string[] = [];
    const run = (replica: string) => async () => {
      runs.push(replica);
      await sleep(interval / 5);
    };
    const start = Date.now();
    for (let tick = 0; tick < 3; tick++) {
      await sleep(start + tick * interval - Date.now());
      expect(await replicaA.runOnce('every-tick', interval, run('A'))).toEqual({
        ran: true,
        result: undefined,
      });
      expect(await replicaB.runOnce('every-tick', interval, run('B'))).toMatchObject({
        ran: false,
        skipped: 'not_due',
      });
    }
    expect(runs).toEqual(['A', 'A', 'A']);
  });

  it('skips a job another replica is running, and runs it once that one is done', async () => {
    let finishRun!: () => void;
    let started!: () => void;
    const runStarted = new Promise<void>((resolve) => (started = resolve));
    const running = replicaA.runOnce(
      'exclusive',
      0,
      () =>
        new Promise<string>((resolve) => {
          finishRun = () => resolve('done');
          started();
        }),
    );
    await runStarted;
    expect(await advisoryLocks()).toBe(1);
    expect((await jobRun('exclusive')).status).toBe('running');
    // The start is recorded too, for whoever looks at a run that seems stuck.
    const [{ recent }] = await database.query<{ recent: boolean }[]>(
      `SELECT started_at > now() - interval '1 minute' AS recent FROM job_runs WHERE name = 'exclusive'`,
    );
    expect(recent).toBe(true);
    for (const replica of [replicaB, replicaB, replicaA]) {
      // The same replica is refused too: the lock belongs to the connection running the job.
      expect(await replica.runOnce('exclusive', 0, async () => 'twice')).toEqual({
        ran: false,
        skipped: 'locked',
      });
    }
    // Only the running job holds a connection: the refused ones gave theirs back.
    expect(checkedOut()).toBe(1);
    finishRun();
    expect(await running).toEqual({ ran: true, result: 'done' });
    expect(await replicaB.runOnce('exclusive', 0, async () => 'after')).toEqual({
      ran: true,
      result: 'after',
    });
  });

  // Three jobs share the table: index sync, task lifecycle, network aggregate.
  it("records a run in its own job's row only: the other jobs stay as they were", async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await ranAgo('bystander', 120);
    const before = await database.query(`SELECT * FROM job_runs WHERE name = 'bystander'`);
    let seenWhileRunning: unknown;
    await replicaA.runOnce('busy', 0, async () => {
      seenWhileRunning = await database.query(`SELECT * FROM job_runs WHERE name = 'bystander'`);
      return 'done';
    });
    await replicaA.runOnce(
      'busy',
      0,
      async () => 'cut short',
      () => true,
    );
    await expect(
      replicaA.runOnce('busy', 0, async () => {
        throw new Error('failed');
      }),
    ).rejects.toThrow('failed');
    // Starting, finishing, interrupting and failing 'busy' left the other job due as it was.
    expect(seenWhileRunning).toEqual(before);
    expect(await database.query(`SELECT * FROM job_runs WHERE name = 'bystander'`)).toEqual(before);
    expect(await replicaB.runOnce('bystander', HOUR, async () => 'ran')).toEqual({
      ran: true,
      result: 'ran',
    });
  });

  it('runs two different jobs at the same time: each job has a lock of its own', async () => {
    let finishRun!: () => void;
    let started!: () => void;
    const runStarted = new Promise<void>((resolve) => (started = resolve));
    const indexSync = replicaA.runOnce(
      'index-sync-like',
      0,
      () =>
        new Promise<string>((resolve) => {
          finishRun = () => resolve('synced');
          started();
        }),
    );
    await runStarted;
    expect(await replicaB.runOnce('task-lifecycle-like', 0, async () => 'collected')).toEqual({
      ran: true,
      result: 'collected',
    });
    finishRun();
    expect(await indexSync).toEqual({ ran: true, result: 'synced' });
  });

  // An accelerated-time audit: after Postgres' clock was set back an hour, the last counted start
  // was an hour ahead of now(), and every job stayed not due until the clock caught up with it.
  it('runs a job whose last counted start is after now: the clock was set back', async () => {
    await ranAgo('set back', -60);
    expect(await replicaA.runOnce('set back', HOUR, async () => 'ran')).toEqual({
      ran: true,
      result: 'ran',
    });
  });

  // The details column is NOT NULL: a job whose run returns nothing is still a success.
  it('records a run that returns nothing as succeeded', async () => {
    expect(await replicaA.runOnce('void', HOUR, async () => undefined)).toEqual({
      ran: true,
      result: undefined,
    });
    expect(await jobRun('void')).toEqual({ status: 'succeeded', details: {}, finished: true });
  });

  it('records a failed run, logs it, lets its error through and frees the job', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await expect(
      replicaA.runOnce('failing', HOUR, async () => {
        throw new Error('the miners did not answer');
      }),
    ).rejects.toThrow('the miners did not answer');
    expect(errors.mock.calls).toEqual([['job failing failed: the miners did not answer']]);
    expect(await jobRun('failing')).toEqual({
      status: 'failed',
      details: { error: 'the miners did not answer' },
      finished: true,
    });
    // A failed run counts for its interval too: the next replica does not retry it at once.
    expect(await replicaB.runOnce('failing', HOUR, async () => 'retried')).toMatchObject({
      ran: false,
      skipped: 'not_due',
    });
  });

  // A restart inside the interval: the replica's first attempt is not due, and it tries again
  // when the last run's interval ends rather than a whole interval after its start.
  it('says when a job skipped as not due is an interval past the start of its last run', async () => {
    await ranAgo('restarted', 20);
    const outcome = await replicaA.runOnce('restarted', HOUR, async () => 'ran');
    expect(outcome).toMatchObject({ ran: false, skipped: 'not_due' });
    expect(outcome.dueInMs).toBeGreaterThan(40 * 60_000 - 5_000);
    expect(outcome.dueInMs).toBeLessThanOrEqual(40 * 60_000);
  });

  // The network aggregate's failed read, an index sync that could call no miner: recorded as
  // they ended, and the job stays due for every replica.
  it('records a run that does not count as it ended, and leaves the job due', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await ranAgo('uncounted', 120);
    await expect(
      replicaA.runOnce(
        'uncounted',
        HOUR,
        async () => {
          throw new Error('the chain cannot be read');
        },
        undefined,
        (ended) => !('error' in ended),
      ),
    ).rejects.toThrow('the chain cannot be read');
    expect(await jobRun('uncounted')).toEqual({
      status: 'failed',
      details: { error: 'the chain cannot be read' },
      finished: true,
    });
    expect(await replicaA.lastRun('uncounted')).toMatchObject({
      status: 'failed',
      details: { error: 'the chain cannot be read' },
      finishedAt: expect.any(Date),
    });
    expect(
      await replicaB.runOnce(
        'uncounted',
        HOUR,
        async () => ({ called: 0 }),
        undefined,
        () => false,
      ),
    ).toEqual({ ran: true, uncounted: true, result: { called: 0 } });
    expect(await jobRun('uncounted')).toEqual({
      status: 'succeeded',
      details: { called: 0 },
      finished: true,
    });
    // Still due; a run that counts holds it back for the interval again.
    expect(await replicaA.runOnce('uncounted', HOUR, async () => ({ called: 6 }))).toEqual({
      ran: true,
      result: { called: 6 },
    });
    expect(await replicaB.runOnce('uncounted', HOUR, async () => 'again')).toMatchObject({
      ran: false,
      skipped: 'not_due',
    });
  });

  // A rolling deploy stops a replica in the middle of an index sync: the replica that replaces
  // it runs the sync at start-up, not an interval behind a run that reached only some miners.
  it('records a run cut short by shutdown as interrupted, and leaves the job due', async () => {
    await ranAgo('cut-short', 120);
    const previous = await finishedAt('cut-short');
    expect(
      await replicaA.runOnce(
        'cut-short',
        HOUR,
        async () => ({ synced: 2 }),
        () => true,
      ),
    ).toEqual({ ran: true, interrupted: true, result: { synced: 2 } });
    expect(await jobRun('cut-short')).toMatchObject({
      status: 'interrupted',
      details: { synced: 2 },
    });
    expect(await finishedAt('cut-short')).toEqual(previous);
    expect(await replicaB.runOnce('cut-short', HOUR, async () => 'whole')).toEqual({
      ran: true,
      result: 'whole',
    });
    expect((await jobRun('cut-short')).status).toBe('succeeded');
  });

  it('records a run that failed as shutdown cut it short as interrupted, not failed', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const aborted = async () => {
      throw new Error('the call was aborted');
    };
    await expect(replicaA.runOnce('aborted', HOUR, aborted, () => true)).rejects.toThrow(
      'the call was aborted',
    );
    expect(await jobRun('aborted')).toEqual({
      status: 'interrupted',
      details: { error: 'the call was aborted' },
      finished: false,
    });
    expect(errors).not.toHaveBeenCalled();
    expect(await replicaB.runOnce('aborted', HOUR, async () => 'whole')).toEqual({
      ran: true,
      result: 'whole',
    });
  });

  it('records a run whose success could not be recorded as failed', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    nextConnectionRefuses(/SET finished_at/, 'succeeded');
    await expect(replicaA.runOnce('unrecorded', 0, async () => 'done')).rejects.toThrow('refused');
    expect((await jobRun('unrecorded')).status).toBe('failed');
    expect(errors.mock.calls).toEqual([[expect.stringMatching(/^job unrecorded failed: refused/)]]);
  });

  it('gives the connection back when the lock cannot be asked for', async () => {
    nextConnectionRefuses(/pg_try_advisory_lock/);
    await expect(replicaA.runOnce('unasked', 0, async () => 'done')).rejects.toThrow('refused');
  });

  // Postgres away for a second as the index sync's tick fired: the sync waited 65 minutes.
  it('tries a scheduled job whose lock could not be asked for again in 5 s, not an interval later', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    nextConnectionRefuses(/pg_try_advisory_lock/);
    const ran: number[] = [];
    const job = new PeriodicJob(
      replicaA,
      'blipped',
      HOUR,
      async () => ran.push(Date.now()),
      new Logger('blipped'),
      // The index sync's rule before it knew whether a run called a miner: every error counted.
      (ended) => !('result' in ended) || ended.result > 0,
    );
    const started = Date.now();
    job.start(Promise.resolve());
    try {
      while (ran.length === 0 && Date.now() - started < FIRST_RETRY_MS + 3000) await sleep(100);
    } finally {
      job.stop();
      await job.settled();
    }
    expect(ran.length).toBe(1);
    expect(ran[0] - started).toBeGreaterThanOrEqual(FIRST_RETRY_MS - 100);
    expect(errors).toHaveBeenCalledWith(expect.stringMatching(/^blipped could not start: refused/));
    expect((await jobRun('blipped')).status).toBe('succeeded');
  });

  // Until then a job failing showed only in the log and in job_runs; an on-call alert had nothing.
  it('counts a run that could not start and one that failed, by job, but not one shutdown cut short', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const failures = async (job: string, stage: string) =>
      sample(await metricsA.scrape(), 'gateway_job_failures_total', { job, stage });
    const job = new PeriodicJob(replicaA, 'counted', HOUR, async () => 'done', new Logger('x'));
    job.start();
    job.stop();
    // Scheduled, its series are there before anything failed: an alert sees the first failure.
    expect([await failures('counted', 'start'), await failures('counted', 'run')]).toEqual([0, 0]);

    nextConnectionRefuses(/pg_try_advisory_lock/);
    await expect(replicaA.runOnce('counted', 0, async () => 'done')).rejects.toThrow('refused');
    const throwing = (message: string) => async () => {
      throw new Error(message);
    };
    await expect(replicaA.runOnce('counted', 0, throwing('boom'))).rejects.toThrow('boom');
    await expect(replicaA.runOnce('counted', 0, throwing('aborted'), () => true)).rejects.toThrow(
      'aborted',
    );

    expect(await failures('counted', 'start')).toBe(1);
    expect(await failures('counted', 'run')).toBe(1);
  });

  // A races audit: with idle_session_timeout set on the server, the lock's session, idle while
  // the job ran, was ended, and the other replica ran the job at the same time.
  it('keeps its lock through a run longer than the server lets a session sit idle', async () => {
    // Set for this replica's sessions alone (a server or pooler would set it for all): set on
    // the database, it stayed on the other pools' connections opened meanwhile (a review).
    const third = new DataSource({
      ...database.options,
      extra: { ...database.options.extra, options: '-c idle_session_timeout=300' },
    });
    await third.initialize();
    // The run lasts until the other replica has tried: a run of a fixed 1.2 s had ended before
    // a loaded CI's checks came, and the other ran the job, lock free.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    try {
      const replicaC = new JobRunner(new JobRunsRepository(third), new MetricsService());
      const run = replicaC.runOnce('idle', 0, async () => {
        await gate;
        return 'done';
      });
      await sleep(900);
      expect(await advisoryLocks()).toBe(1);
      expect(await replicaB.runOnce('idle', 0, async () => 'twice')).toEqual({
        ran: false,
        skipped: 'locked',
      });
      release();
      await expect(run).resolves.toEqual({ ran: true, result: 'done' });
    } finally {
      release();
      await third.destroy();
    }
  });

  // The same audit: once the lock's connection was gone, the run's end could not be recorded
  // ("Query runner already released"), the row stayed `running` and the job due, and replicas
  // ran it back to back. It is recorded through the pool, with a warning that the lock was lost.
  it('records the end of a run whose lock was lost, and warns of the loss', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const run = replicaA.runOnce('terminated', HOUR, async () => {
      await database.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      for (let waited = 0; waited < 3000 && warned.mock.calls.length === 0; waited += 20)
        await sleep(20);
      return 'done';
    });
    await expect(run).resolves.toEqual({ ran: true, result: 'done' });
    expect(warned.mock.calls).toEqual([
      [expect.stringMatching(/^job terminated lost its lock: the connection holding it closed/)],
    ]);
    expect(await jobRun('terminated')).toMatchObject({ status: 'succeeded', finished: true });
    // Counted: not due again within the interval, on either replica.
    expect(await replicaB.runOnce('terminated', HOUR, async () => 'again')).toMatchObject({
      ran: false,
      skipped: 'not_due',
    });
  });

  // A review: recorded through the pool once the lock was gone, the run's end overwrote the row
  // of the run another replica had started meanwhile, `running` no more.
  it("leaves alone the row of a run another replica started once this run's lock was lost", async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let markStarted = () => {};
    const started = new Promise<'started'>((resolve) => (markStarted = () => resolve('started')));
    let other: Promise<unknown> | undefined;
    const first = replicaA.runOnce('taken over', 0, async () => {
      await database.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      // Started once the first's lock is gone; until then it is skipped as locked. Told by the
      // run itself: polled, the lock was seen free just before the second took it, and the wait
      // for a skipped run then waited on the gate for good (seen on a loaded CI).
      for (let waited = 0; waited < 3000; waited += 20) {
        other = replicaB.runOnce('taken over', 0, async () => {
          markStarted();
          await gate;
          return 'second';
        });
        if ((await Promise.race([other, started])) === 'started') break;
        await sleep(20);
      }
      return 'first';
    });
    await expect(first).resolves.toMatchObject({ ran: true, result: 'first' });
    expect(await jobRun('taken over')).toMatchObject({ status: 'running' });
    release();
    await expect(other).resolves.toEqual({ ran: true, result: 'second' });
    expect(await jobRun('taken over')).toMatchObject({ status: 'succeeded', details: 'second' });
  });

  // A hosted-Postgres audit: behind a pooler in transaction mode, a run's statements reach other
  // server sessions than the one that took the lock, and the unlock answers false unheard.
  it("warns when the lock's session no longer held the lock at the run's end", async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const create = database.createQueryRunner.bind(database);
    jest.spyOn(database, 'createQueryRunner').mockImplementationOnce((...args) => {
      const runner: QueryRunner = create(...args);
      const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
      // The session lets the lock go before the job's own unlock: as another session would be.
      runner.query = (async (text: string, parameters?: unknown[]) => {
        if (/pg_advisory_unlock/.test(text)) await query(text, parameters);
        return query(text, parameters);
      }) as QueryRunner['query'];
      return runner;
    });
    expect(await replicaA.runOnce('pooled', 0, async () => 'done')).toEqual({
      ran: true,
      result: 'done',
    });
    expect(warned.mock.calls).toEqual([
      [
        expect.stringMatching(
          /^job pooled: its session no longer held the job's lock at the run's end/,
        ),
      ],
    ]);
  });

  it('closes a connection that could not unlock the job, so that the lock goes with it', async () => {
    nextConnectionRefuses(/pg_advisory_unlock/);
    await expect(replicaA.runOnce('stuck', 0, async () => 'done')).rejects.toThrow('refused');
    // afterEach: no connection out, no lock held; and either replica runs the job again.
    expect(await replicaB.runOnce('stuck', 0, async () => 'again')).toEqual({
      ran: true,
      result: 'again',
    });
  });
});
