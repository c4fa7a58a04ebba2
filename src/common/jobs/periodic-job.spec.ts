import { Logger } from '@nestjs/common';
import { CountsForInterval, JobOutcome, JobRunner, RunEnd } from './job-runner';
import { PeriodicJob } from './periodic-job';

const INTERVAL_MS = 60_000;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * A job over a runner that runs whatever it is asked to (no other replica), as JobRunner does:
 * `interrupted` is the last run's question to the job, asked once it ended, and `counts` says
 * whether a run that ended counts for the interval. `skips` are the outcomes of the next calls
 * that do not run (another replica holds the job, or ran it recently), in order; `refusals` the
 * errors of the next calls that fail before the run starts (Postgres away for the lock).
 */
function setUp(
  run: () => Promise<unknown> = () => Promise.resolve('done'),
  counts?: CountsForInterval<unknown>,
) {
  const runner = {
    calls: 0,
    runs: [] as number[],
    skips: [] as JobOutcome<unknown>[],
    refusals: [] as Error[],
    interrupted: undefined as (() => boolean) | undefined,
    announce: () => undefined,
    async runOnce(
      _name: string,
      _intervalMs: number,
      work: () => Promise<unknown>,
      interrupted: () => boolean,
      counted: CountsForInterval<unknown> = () => true,
    ): Promise<JobOutcome<unknown>> {
      runner.calls += 1;
      const refusal = runner.refusals.shift();
      if (refusal) throw refusal;
      const skip = runner.skips.shift();
      if (skip) return skip;
      runner.runs.push(Date.now());
      runner.interrupted = interrupted;
      const result = await work();
      if (interrupted()) return { ran: true, interrupted: true, result };
      return counted({ result }) ? { ran: true, result } : { ran: true, uncounted: true, result };
    },
  };
  const logger = { log: jest.fn(), debug: jest.fn(), error: jest.fn() };
  const job = new PeriodicJob(
    runner as unknown as JobRunner,
    'the-job',
    INTERVAL_MS,
    run,
    logger as unknown as Logger,
    counts,
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
  // A restart inside the interval: the start-up run is not due, and the next attempt is when
  // the last run's interval ends, not a whole interval after the restart.
  it('runs a job skipped at start as not due once its interval ends, then at every interval', async () => {
    jest.useFakeTimers();
    const { job, runner } = setUp();
    runner.skips.push({ ran: false, skipped: 'not_due', dueInMs: 20_000 });
    const started = Date.now();
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(0);
    expect(runner.calls).toBe(1);
    await jest.advanceTimersByTimeAsync(19_999);
    expect(runner.runs).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.runs).toEqual([started + 20_000]);
    await jest.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(runner.runs).toEqual([
      started + 20_000,
      started + 20_000 + INTERVAL_MS,
      started + 20_000 + 2 * INTERVAL_MS,
    ]);
    job.stop();
  });

  it('keeps the interval when another replica holds the job', async () => {
    jest.useFakeTimers();
    const { job, runner, logger } = setUp();
    runner.skips.push({ ran: false, skipped: 'locked' });
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(runner.calls).toBe(1);
    // Every replica but one says so at each tick: at debug, not info (a log audit's finding).
    expect(logger.debug).toHaveBeenCalledWith('the-job: another replica is running it');
    expect(logger.log).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.calls).toBe(2);
    job.stop();
  });

  // What the network aggregate asks: a failed read spends no miner's budget, and waiting a
  // whole interval after it left the aggregate unserved for that long.
  it('retries a failed run that does not count sooner, 5 s and doubling, up to the interval', async () => {
    jest.useFakeTimers();
    let failures = 5;
    const { job, runner, logger } = setUp(
      () =>
        failures-- > 0 ? Promise.reject(new Error('the node is down')) : Promise.resolve('read'),
      (ended) => !('error' in ended),
    );
    const started = Date.now();
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(0);
    expect(logger.error).toHaveBeenCalledWith('the-job failed: the node is down');
    await jest.advanceTimersByTimeAsync(5_000 + 10_000 + 20_000 + 40_000);
    // 5 s, 10 s, 20 s, 40 s; the fifth retry would wait 80 s, and waits the interval instead.
    expect(runner.runs.map((at) => at - started)).toEqual([0, 5_000, 15_000, 35_000, 75_000]);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(runner.runs.length).toBe(6);
    // It succeeded: the next is an interval later, and a later failure starts again at 5 s.
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(runner.runs.length).toBe(6);
    failures = 1;
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.runs.length).toBe(7);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(runner.runs.length).toBe(8);
    job.stop();
  });

  it('retries a run whose result the job says does not count, as a failed one', async () => {
    jest.useFakeTimers();
    const results = [{ called: 0 }, { called: 6 }];
    const { job, runner } = setUp(
      () => Promise.resolve(results.shift()),
      (ended) => 'error' in ended || (ended.result as { called: number }).called > 0,
    );
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(5_000);
    expect(runner.runs.length).toBe(2);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(runner.runs.length).toBe(2);
    job.stop();
  });

  // Postgres away for a second as the tick fired: the job did not run, whatever its rule for a
  // failed run (the index sync's counts one), and waiting an interval left the index 65 minutes
  // old.
  it.each([
    ['the default', undefined],
    ['every error', (ended: RunEnd<unknown>) => !('result' in ended) || ended.result === 'done'],
  ])(
    'retries in 5 s a job that could not start, though its failed runs count (%s)',
    async (_rule, counts) => {
      jest.useFakeTimers();
      const { job, runner, logger } = setUp(undefined, counts);
      runner.refusals.push(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      job.start(Promise.resolve());
      await jest.advanceTimersByTimeAsync(0);
      expect(runner.runs).toEqual([]);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(runner.runs.length).toBe(1);
      expect(logger.error).toHaveBeenCalledWith(
        'the-job could not start: connect ECONNREFUSED 127.0.0.1:5432',
      );
      // It ran: the next is an interval later.
      await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
      expect(runner.runs.length).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(runner.runs.length).toBe(2);
      job.stop();
    },
  );

  // The database away, each retry wrote the same error: about 60 an hour per job (a log audit).
  it('says the first of attempts in a row that could not start, another cause, and once that it could again', async () => {
    jest.useFakeTimers();
    const { job, runner, logger } = setUp();
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    // Another cause is said too.
    const denied = new Error('permission denied for table job_runs');
    runner.refusals.push(refused, refused, refused, denied);
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(0);
    await jest.advanceTimersByTimeAsync(5_000 + 10_000 + 20_000 + 40_000);
    expect(runner.runs.length).toBe(1);
    expect(logger.error.mock.calls).toEqual([
      [`the-job could not start: ${refused.message}`],
      [`the-job could not start: ${denied.message}`],
    ]);
    expect(logger.log).toHaveBeenCalledWith(
      'the-job could start again, after 4 attempts that could not',
    );
    job.stop();
  });

  // An audit's finding: the next run was dated by the wall clock, so one set back 6 h during a
  // run put the next run off by 6 h and the interval (docs/decisions.md, "Clocks").
  it('runs again an interval after the last run started, though the wall clock was set back meanwhile', async () => {
    jest.useFakeTimers();
    const { job, runner } = setUp(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      jest.setSystemTime(Date.now() - 6 * 3_600_000);
      return 'done';
    });
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(runner.calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.calls).toBe(2);
    job.stop();
  });

  // The default: a failed run counts for its interval (a task pass may have called miners).
  it('runs a failed job again at the next interval when its failures count', async () => {
    jest.useFakeTimers();
    const { job, runner } = setUp(() => Promise.reject(new Error('failed')));
    job.start(Promise.resolve());
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(runner.runs.length).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.runs.length).toBe(2);
    job.stop();
  });
});
