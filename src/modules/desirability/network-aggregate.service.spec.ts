import { Logger } from '@nestjs/common';
import { NetworkAggregateService } from './network-aggregate.service';
import { NetworkVote } from './network-vote';
import { JobView } from './desirability.types';
import { StoredNetworkAggregate } from './network-votes.repository';

const SHA_A = 'a'.repeat(40);
const SHA_B = 'b'.repeat(40);
const NOW = new Date('2026-11-30T12:00:00Z');

const tao: JobView = {
  id: 'tao',
  weight: 1,
  params: {
    platform: 'x',
    label: '#tao',
    keyword: null,
    post_start_datetime: null,
    post_end_datetime: null,
  },
};

/** The service with only its job runner (`jobRuns`) and a one-minute sync interval. */
function withJobRuns(jobRuns: object): NetworkAggregateService {
  const unused = {} as never;
  return new NetworkAggregateService(
    unused,
    unused,
    unused,
    unused,
    unused,
    unused,
    jobRuns as never,
    { desirability: { syncIntervalMs: 60_000 } } as never,
  );
}

/**
 * The aggregate job run once over fakes: commitments of two validators of equal stake, whose
 * files are `votes` by hotkey, and a metagraph read at block 4,200. Returns what it stored.
 */
async function aggregateOf(votes: Record<string, NetworkVote>): Promise<StoredNetworkAggregate> {
  const { service, saveAggregate } = overVotes(votes);
  jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  await service.runIfDue();
  expect(saveAggregate).toHaveBeenCalledTimes(1);
  return saveAggregate.mock.calls[0][0];
}

/** The service over those fakes, and what it stores; `votes` is read at every run. */
function overVotes(votes: Record<string, NetworkVote>) {
  const saveAggregate = jest.fn((_aggregate: StoredNetworkAggregate) => Promise.resolve());
  const service = new NetworkAggregateService(
    { voteAt: (hotkey: string) => Promise.resolve(votes[hotkey]) } as never,
    {
      all: () =>
        Promise.resolve([
          { hotkey: 'withdrawn', block: 10, sha: SHA_A },
          { hotkey: 'voter', block: 11, sha: SHA_B },
        ]),
    } as never,
    { saveAggregate } as never,
    {
      validatorStakes: () =>
        new Map([
          ['withdrawn', 100],
          ['voter', 100],
        ]),
      metagraphStatus: () => Promise.resolve({ stored: { block: 4200 } }),
    } as never,
    { jobs: [] } as never,
    { now: () => NOW } as never,
    // No other replica: the job runs whenever asked.
    {
      runOnce: (_name: string, _intervalMs: number, run: () => Promise<unknown>) => run(),
    } as never,
    { desirability: { syncIntervalMs: 60_000 }, network: { validatorMinStake: 1000 } } as never,
  );
  return { service, saveAggregate };
}

describe(NetworkAggregateService.name, () => {
  afterEach(() => jest.restoreAllMocks());

  // A withdrawn vote is no vote: its stake must not keep a share that no job receives.
  it('skips a withdrawn vote, so that the validators still voting share the 70 % alone', async () => {
    const aggregate = await aggregateOf({
      withdrawn: { ok: true, submitted: [], jobs: [], notes: [] },
      voter: { ok: true, submitted: [tao], jobs: [tao], notes: [] },
    });
    expect(aggregate.skipped).toEqual([
      {
        hotkey: 'withdrawn',
        sha: SHA_A,
        block: 10,
        reason: 'the vote is withdrawn (an empty list)',
      },
    ]);
    expect(aggregate.validators.map(({ hotkey, share }) => [hotkey, share])).toEqual([
      ['voter', 1],
    ]);
    expect(aggregate.jobs).toEqual([{ ...tao, weight: 0.7 }]);
  });

  // Every validator without a vote, with its reason, at every sync (20 minutes): on subnet 13 a
  // line of several KB, the same each time (a log audit).
  it('lists the validators without a vote in its line when the list changed, and counts them otherwise', async () => {
    const votes: Record<string, NetworkVote> = {
      withdrawn: { ok: true, submitted: [], jobs: [], notes: [] },
      voter: { ok: true, submitted: [tao], jobs: [tao], notes: [] },
    };
    const { service } = overVotes(votes);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await service.runIfDue();
    await service.runIfDue();
    votes.voter = { ok: true, submitted: [], jobs: [], notes: [] };
    await service.runIfDue();
    const withdrawn = 'withdrawn: the vote is withdrawn (an empty list)';
    expect(log.mock.calls.map(([line]) => String(line))).toEqual([
      `network desirabilities: 1 jobs from 1 validators; no vote from 1: ${withdrawn}`,
      'network desirabilities: 1 jobs from 1 validators; the rest as in the last line: no vote ' +
        'from 1 (GET /api/v1/desirabilities/network)',
      'network desirabilities: 0 jobs from 0 validators; no vote from 2: ' +
        `${withdrawn}; voter: the vote is withdrawn (an empty list)`,
    ]);
  });

  // The short form counted what it left out: "no vote from 0" when only entries left out repeat.
  it('counts the validators with entries left out when only those repeat', async () => {
    const note = 'entry 2: an unknown platform';
    const { service } = overVotes({
      withdrawn: { ok: true, submitted: [tao], jobs: [tao], notes: [] },
      voter: { ok: true, submitted: [tao], jobs: [tao], notes: [note] },
    });
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await service.runIfDue();
    await service.runIfDue();
    expect(log.mock.calls.map(([line]) => String(line))).toEqual([
      `network desirabilities: 1 jobs from 2 validators; entries left out: voter: ${note}`,
      'network desirabilities: 1 jobs from 2 validators; the rest as in the last line: entries ' +
        'left out from 1 (GET /api/v1/desirabilities/network)',
    ]);
  });

  it('names the block the stakes were read at', async () => {
    const aggregate = await aggregateOf({
      withdrawn: { ok: true, submitted: [], jobs: [], notes: [] },
      voter: { ok: true, submitted: [tao], jobs: [tao], notes: [] },
    });
    expect(aggregate).toMatchObject({ computedAt: NOW, block: 4200 });
  });
  // The job's row says how the latest attempt ended, on every replica and after a restart.
  it('reads the latest attempt from the job’s row: a failed one with its error', async () => {
    const finishedAt = new Date('2026-12-03T10:00:00Z');
    const lastRun = jest.fn();
    const service = withJobRuns({ lastRun });
    lastRun.mockResolvedValueOnce(undefined);
    expect(await service.lastAttempt()).toBeUndefined();
    lastRun.mockResolvedValueOnce({ status: 'running', finishedAt: null, details: {} });
    expect(await service.lastAttempt()).toBeUndefined();
    lastRun.mockResolvedValueOnce({
      status: 'failed',
      finishedAt,
      details: { error: 'The chain cannot be read now' },
    });
    expect(await service.lastAttempt()).toEqual({
      ok: false,
      at: finishedAt,
      error: 'The chain cannot be read now',
    });
    // A retry in progress: the failed attempt is still the latest that ended.
    lastRun.mockResolvedValueOnce({
      status: 'running',
      finishedAt,
      details: { error: 'The chain cannot be read now' },
    });
    expect((await service.lastAttempt())?.ok).toBe(false);
    lastRun.mockResolvedValueOnce({
      status: 'succeeded',
      finishedAt,
      details: { counted: 3, skipped: 1 },
    });
    expect(await service.lastAttempt()).toEqual({ ok: true, at: finishedAt });
    expect(lastRun).toHaveBeenCalledWith('network-desirabilities');
  });

  // Kept, one failed read (a Postgres blip, a statement timeout) would have answered every
  // get_desirabilities with it until another aggregate was stored, an interval later.
  it('reads the stored aggregate again after a read that failed, keeping no failure', async () => {
    const stored = { computedAt: NOW, block: 4200, jobs: [tao] };
    const findAggregateJobs = jest
      .fn()
      .mockRejectedValueOnce(new Error('canceling statement due to statement timeout'))
      .mockResolvedValue(stored);
    const findAggregateStatus = jest
      .fn()
      .mockRejectedValueOnce(new Error('Connection terminated unexpectedly'))
      .mockResolvedValue({ version: '7' });
    const unused = {} as never;
    const service = new NetworkAggregateService(
      unused,
      unused,
      {
        aggregateVersion: () => Promise.resolve('7'),
        findAggregateJobs,
        findAggregateStatus,
      } as never,
      unused,
      unused,
      unused,
      unused,
      { desirability: { syncIntervalMs: 60_000 } } as never,
    );

    await expect(service.storedJobs()).rejects.toThrow('statement timeout');
    await expect(service.storedStatus()).rejects.toThrow('Connection terminated');
    expect(await service.storedJobs()).toBe(stored);
    expect(await service.storedStatus()).toEqual({ version: '7' });
    // The good read is kept while the version stays.
    expect(await service.storedJobs()).toBe(stored);
    expect(findAggregateJobs).toHaveBeenCalledTimes(2);
    expect(findAggregateStatus).toHaveBeenCalledTimes(2);
  });

  // It reads a chain node and a git repository, and spends no miner's call budget.
  it('tells the job runner that a failed read does not count for the interval', async () => {
    const runOnce = jest.fn(() => Promise.resolve({ ran: true }));
    const service = withJobRuns({ runOnce });
    await service.runIfDue();
    const counts = (runOnce.mock.calls[0] as unknown[])[4] as (ended: object) => boolean;
    expect(counts({ error: new Error('The chain cannot be read now') })).toBe(false);
    expect(counts({ result: { counted: 3, skipped: 1 } })).toBe(true);
  });
});
