import { DataSource } from 'typeorm';
import { JobRunner } from '../../src/common/jobs/job-runner';
import { JobRunsRepository } from '../../src/common/jobs/job-runs.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const HOUR = 3_600_000;

/**
 * The job runner against Postgres, two replicas sharing one database: a job runs on one at a
 * time, once per interval, and its run is recorded whether it succeeds or fails.
 */
describe('JobRunner across replicas', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let replicaA: JobRunner;
  let replicaB: JobRunner;
  let second: DataSource;

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

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'jobs' });
    database = medium.dataSource;
    // The second replica has a pool of its own, as another process would.
    second = new DataSource(database.options);
    await second.initialize();
    replicaA = new JobRunner(new JobRunsRepository(database));
    replicaB = new JobRunner(new JobRunsRepository(second));
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
    expect(await replicaB.runOnce('hourly', HOUR, run)).toEqual({
      ran: false,
      skipped: 'not_due',
    });
    expect(run).not.toHaveBeenCalled();
    // An interval shorter than the time since the last run: due again.
    expect(await replicaB.runOnce('hourly', 1, run)).toEqual({ ran: true, result: {} });
    expect(await advisoryLocks()).toBe(0);
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
    expect(await replicaB.runOnce('exclusive', 0, async () => 'twice')).toEqual({
      ran: false,
      skipped: 'locked',
    });
    // The same replica is refused too: the lock belongs to the connection running the job.
    expect(await replicaA.runOnce('exclusive', 0, async () => 'twice')).toEqual({
      ran: false,
      skipped: 'locked',
    });
    finishRun();
    expect(await running).toEqual({ ran: true, result: 'done' });
    expect(await advisoryLocks()).toBe(0);
    expect(await replicaB.runOnce('exclusive', 0, async () => 'after')).toEqual({
      ran: true,
      result: 'after',
    });
  });

  it('records a failed run, lets its error through and frees the job', async () => {
    await expect(
      replicaA.runOnce('failing', HOUR, async () => {
        throw new Error('the miners did not answer');
      }),
    ).rejects.toThrow('the miners did not answer');
    expect(await jobRun('failing')).toEqual({
      status: 'failed',
      details: { error: 'the miners did not answer' },
      finished: true,
    });
    expect(await advisoryLocks()).toBe(0);
    // A failed run counts for its interval too: the next replica does not retry it at once.
    expect(await replicaB.runOnce('failing', HOUR, async () => 'retried')).toEqual({
      ran: false,
      skipped: 'not_due',
    });
  });
});
