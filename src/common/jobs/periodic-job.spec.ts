import { Logger } from '@nestjs/common';
import { JobOutcome, JobRunner } from './job-runner';
import { PeriodicJob } from './periodic-job';

const INTERVAL_MS = 60_000;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * A job over a runner that runs whatever it is asked to (no other replica), as JobRunner does:
 * `interrupted` is the last run's question to the job, asked once it ended.
 */
function setUp(run: () => Promise<unknown> = () => Promise.resolve('done')) {
  const runner = {
    calls: 0,
    interrupted: undefined as (() => boolean) | undefined,
    async runOnce(
      _name: string,
      _intervalMs: number,
      work: () => Promise<unknown>,
      interrupted: () => boolean,
    ): Promise<JobOutcome<unknown>> {
      runner.calls += 1;
      runner.interrupted = interrupted;
      const result = await work();
      return interrupted() ? { ran: true, interrupted: true, result } : { ran: true, result };
    },
  };
  const logger = { log: jest.fn(), error: jest.fn() };
  const job = new PeriodicJob(
    runner as unknown as JobRunner,
    'the-job',
    INTERVAL_MS,
    run,
    logger as unknown as Logger,
  );
  return { job, runner, logger };
}

describe(PeriodicJob.name, () => {
  afterEach(() => jest.useRealTimers());

  it('runs once per interval, and no more once stopped', async () => {
    jest.useFakeTimers();
    const { job, runner } = setUp();
    job.start();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(runner.calls).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.calls).toBe(1);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(runner.calls).toBe(2);
    job.stop();
    await jest.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    expect(runner.calls).toBe(2);
  });

  // Shutdown can come before the network is ready: the first run must not start after it.
  it('does not start the first run once stopped, though what it waited for settles after', async () => {
    const { job, runner } = setUp();
    const ready = deferred();
    job.start(ready.promise);
    job.stop();
    ready.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runner.calls).toBe(0);
  });

  // What JobRunner records as interrupted, leaving the job due for the other replicas.
  it('tells the runner that a run still going when the job was stopped was cut short', async () => {
    const finish = deferred<string>();
    const { job, runner } = setUp(() => finish.promise);
    const outcome = job.runIfDue();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runner.interrupted?.()).toBe(false);
    job.stop();
    expect(runner.interrupted?.()).toBe(true);
    finish.resolve('part');
    expect(await outcome).toEqual({ ran: true, interrupted: true, result: 'part' });
  });

  it('starts no second run here while one is in progress, and shutdown waits for the first', async () => {
    const finish = deferred<string>();
    const { job, runner } = setUp(() => finish.promise);
    const first = job.runIfDue();
    expect(await job.runIfDue()).toEqual({ ran: false, skipped: 'locked' });
    expect(runner.calls).toBe(1);
    let settled = false;
    const shutdown = job.settled().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish.resolve('done');
    await shutdown;
    expect(await first).toEqual({ ran: true, result: 'done' });
  });

  // A scheduled run has no caller to throw to: its error must be logged, not left unhandled.
  it('logs a scheduled run that failed, and runs again at the next tick', async () => {
    jest.useFakeTimers();
    let fail = true;
    const { job, runner, logger } = setUp(() =>
      fail ? Promise.reject(new Error('the miners did not answer')) : Promise.resolve('done'),
    );
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(0);
    expect(logger.error).toHaveBeenCalledWith('the-job failed: the miners did not answer');
    fail = false;
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(runner.calls).toBe(2);
    job.stop();
  });
});
