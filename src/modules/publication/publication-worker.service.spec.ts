import { Logger } from '@nestjs/common';
import {
  CommitmentRateLimitedError,
  CommitmentWindow,
} from '../../network/chain/commitment-results';
import { LAST_ERROR_EXAMPLE } from './dto/publication-status.dto';
import { PublicationWorker } from './publication-worker.service';
import { PublicationRow } from './publication.types';

const HOTKEY = '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';
const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

const NOW = new Date('2026-11-30T12:00:00Z');

/**
 * A worker with a claimed row (`row` over a pending version 3) and fakes whose defaults succeed
 * (`found`: the row as the worker finds it after a lost claim, by default replaced by version
 * 4); returns the worker, the repository's spies and the log's.
 */
function workerWith(
  row: Partial<PublicationRow>,
  fakes: {
    publish?: (hotkey: string, content: string, options?: unknown) => Promise<unknown>;
    recordPushed?: () => Promise<boolean>;
    recordCommitted?: () => Promise<boolean>;
    found?: Pick<PublicationRow, 'version' | 'claimed_by'>;
    /** The SHA our commitment on chain names (by default the vote's: nothing to submit). */
    onChain?: string;
    /** What submitting the commitment does (ChainCommitmentsService.commit). */
    commit?: () => Promise<unknown>;
    /** When the chain takes a commitment again, as its storage says (ChainCommitmentsService). */
    commitmentWindow?: () => Promise<CommitmentWindow | undefined>;
    /** When the chain would refuse a commitment now (by default it would take one). */
    windowAhead?: () => Promise<(CommitmentWindow & { rule: 'space' | 'rate' }) | undefined>;
    /** Our file at a commit (GravityGit.preferencesAt). */
    preferencesAt?: () => Promise<unknown>;
    /** False: no vote is due, the claim finds nothing (by default the row is claimed once). */
    due?: boolean;
    /** Whether the branch has a commit (GravityGit.onBranch; by default it has). */
    onBranch?: (sha: string) => Promise<boolean>;
    /** Whether the claim still holds just before a submission (by default it does). */
    holds?: () => Promise<boolean>;
    /** PUBLICATION_RETRY_MS (12 s unless said). */
    retryMs?: number;
  } = {},
) {
  const claimed = { hotkey: HOTKEY, version: 3, commit_sha: null, attempts: 0, ...row };
  let claims = 0;
  const repository = {
    claim: () => Promise.resolve(fakes.due !== false && claims++ === 0 ? claimed : undefined),
    restartCommitted: jest.fn(() => Promise.resolve(true)),
    recordPushed: fakes.recordPushed ?? (() => Promise.resolve(true)),
    recordCommitted: jest.fn(fakes.recordCommitted ?? (() => Promise.resolve(true))),
    recordRetry: jest.fn(() => Promise.resolve(true)),
    holds: jest.fn(fakes.holds ?? (() => Promise.resolve(true))),
    find: () =>
      Promise.resolve({ ...claimed, ...(fakes.found ?? { version: 4, claimed_by: null }) }),
    release: jest.fn(() => Promise.resolve()),
  };
  /** True while the worker holds the registration lock (TasksService.registering). */
  const lock = { held: false };
  const tasks = {
    recordNetworkRegistration: jest.fn(() => Promise.resolve()),
    forgetNetworkRegistration: jest.fn(() => Promise.resolve()),
    registering: jest.fn(async (work: (manager: unknown) => Promise<unknown>) => {
      lock.held = true;
      try {
        return await work({});
      } finally {
        lock.held = false;
      }
    }),
  };
  const commitments = {
    of: () => Promise.resolve({ hotkey: HOTKEY, block: 120, sha: fakes.onChain ?? SHA }),
    commitmentWindow: jest.fn(fakes.commitmentWindow ?? (() => Promise.resolve(undefined))),
    windowAhead: fakes.windowAhead ?? (() => Promise.resolve(undefined)),
    commit: fakes.commit ?? (() => Promise.reject(new Error('no node in this spec'))),
  };
  const config = {
    netuid: 1,
    publication: {
      intervalMs: 5000,
      leaseMs: 600_000,
      retryMs: fakes.retryMs ?? 12_000,
      retryMaxMs: 3_600_000,
    },
  };
  const worker = new PublicationWorker(
    repository as never,
    { enabled: true } as never,
    tasks as never,
    {
      recordPublicationAttempt: () => undefined,
      recordPublicationFailure: () => undefined,
    } as never,
    { now: () => NOW } as never,
    commitments as never,
    { hotkey: HOTKEY, keypair: {} } as never,
    {
      publish: fakes.publish ?? (() => Promise.resolve({ sha: SHA, pushed: true })),
      // Our file at the commitment on chain: by default not the vote's.
      preferencesAt: fakes.preferencesAt ?? (() => Promise.resolve({ kind: 'no-commit' })),
      onBranch: fakes.onBranch ?? (() => Promise.resolve(true)),
    } as never,
    config as never,
  );
  const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  return { worker, repository, commitments, tasks, lock, log, warn };
}

/**
 * A worker whose claim of version 3 is lost at its first record (the push's): `now` is the row
 * as the worker finds it afterwards. Returns what it logged.
 */
async function loseClaim(now: Pick<PublicationRow, 'version' | 'claimed_by'>) {
  const { worker, repository, log, warn } = workerWith(
    {},
    { recordPushed: () => Promise.resolve(false), found: now },
  );
  await worker.runOnce();
  expect(repository.release).toHaveBeenCalledTimes(1);
  return { logged: log.mock.calls.map(([line]) => String(line)), warned: warn.mock.calls };
}

describe(PublicationWorker.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it('says a newer vote replaced the one it was publishing when the version moved on', async () => {
    const { logged, warned } = await loseClaim({ version: 4, claimed_by: null });
    expect(logged).toContain('vote 3 was replaced by a newer vote before it was published');
    expect(warned).toEqual([]);
  });

  it('says its lease ran out and another replica took over when the version is still its own', async () => {
    const { logged, warned } = await loseClaim({
      version: 3,
      claimed_by: 'other-host:41:0a1b2c3d',
    });
    expect(logged.filter((line) => line.includes('replaced'))).toEqual([]);
    expect(warned).toEqual([
      [
        "vote 3: this replica's claim ran out (PUBLICATION_LEASE_MS) before it recorded its step, " +
          'and another replica (other-host:41:0a1b2c3d) took the publication over; its record stands',
      ],
    ]);
  });

  // The wait doubles per consecutive failure (retryDelay): the row's count, not a fresh start.
  it('retries a failed push after the wait its earlier failures call for', async () => {
    const { worker, repository } = workerWith(
      { attempts: 3 },
      { publish: () => Promise.reject(new Error('remote hung up')) },
    );
    await worker.runOnce();
    expect(repository.recordRetry).toHaveBeenCalledWith(
      expect.objectContaining({ version: 3 }),
      'failed',
      'push failed: remote hung up',
      new Date(NOW.getTime() + 12_000 * 2 ** 3),
      NOW,
    );
  });

  // The pushed count starts over: the wait of a failure after it is the first one's.
  it('retries a commit that failed after a recorded push after the first wait, whatever came before', async () => {
    const { worker, repository } = workerWith(
      { attempts: 8 },
      {
        onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        commit: () => Promise.reject(new Error('node gone')),
      },
    );
    await worker.runOnce();
    expect(repository.recordRetry).toHaveBeenCalledWith(
      expect.objectContaining({ version: 3 }),
      'failed',
      'commit failed: node gone',
      new Date(NOW.getTime() + 12_000),
      NOW,
    );
  });

  describe('refused by the chain as too soon', () => {
    /** The pushed vote's commitment refused by the space rule in block 6,852,692. */
    const refused = (
      commitmentWindow: () => Promise<CommitmentWindow | undefined>,
      attempts = 2,
      retryMs?: number,
    ) =>
      workerWith(
        { commit_sha: SHA, state: 'pushed', attempts },
        {
          onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
          commit: () =>
            Promise.reject(
              new CommitmentRateLimitedError(
                'commitments.SpaceLimitExceeded: Space Limit Exceeded for the current interval',
                'space',
                6_852_692,
              ),
            ),
          commitmentWindow,
          retryMs,
        },
      );
    /** Subnet 13's epoch: a tempo of 360 blocks, plus one. */
    const EPOCH = 361;
    /** What the worker writes, as the OpenAPI document's example shows it. */
    const reason = LAST_ERROR_EXAMPLE;
    const retriedAfter = (repository: ReturnType<typeof refused>['repository'], ms: number) =>
      expect(repository.recordRetry).toHaveBeenCalledWith(
        expect.objectContaining({ version: 3 }),
        'pushed',
        reason,
        new Date(NOW.getTime() + ms),
        NOW,
      );

    // Each refused commitment is an extrinsic in a block: the retry goes when the chain takes it, two
    // blocks after the block its storage names, not 12 s later.
    it('retries when the chain takes commitments again, by its storage', async () => {
      const window = { acceptedFrom: 6_852_849, head: 6_852_692, intervalBlocks: EPOCH };
      const { worker, repository, commitments, warn } = refused(() => Promise.resolve(window));
      await worker.runOnce();
      retriedAfter(repository, (6_852_849 - 6_852_692) * 12_000 + 24_000);
      expect(commitments.commitmentWindow).toHaveBeenCalledWith(HOTKEY, 'space', 6_852_692);
      expect(String(warn.mock.calls[0][0])).toMatch(
        /next attempt at .* \(the chain takes commitments again from block 6852849\)$/,
      );
    });

    // An epoch is 72 minutes, PUBLICATION_RETRY_MAX_MS's default an hour: capped by it, a refusal
    // early in the epoch was retried inside it and sent a second refusal (a review's finding).
    it('waits past PUBLICATION_RETRY_MAX_MS until the epoch turns, never longer than the interval', async () => {
      const early = refused(() =>
        Promise.resolve({ acceptedFrom: 6_853_050, head: 6_852_692, intervalBlocks: EPOCH }),
      );
      await early.worker.runOnce();
      retriedAfter(early.repository, 358 * 12_000 + 24_000);
      jest.restoreAllMocks();
      // A storage answer further off than the rule allows waits one interval.
      const far = refused(() =>
        Promise.resolve({ acceptedFrom: 7_000_000, head: 6_852_692, intervalBlocks: EPOCH }),
      );
      await far.worker.runOnce();
      retriedAfter(far.repository, EPOCH * 12_000 + 24_000);
    });

    it('waits no less than PUBLICATION_RETRY_MS', async () => {
      const open = { acceptedFrom: 6_852_600, head: 6_852_692, intervalBlocks: EPOCH };
      const soon = refused(() => Promise.resolve(open));
      await soon.worker.runOnce();
      retriedAfter(soon.repository, 24_000);
      jest.restoreAllMocks();
      const slow = refused(() => Promise.resolve(open), 2, 60_000);
      await slow.worker.runOnce();
      retriedAfter(slow.repository, 60_000);
    });

    // A refused commitment is still included in a block: one the storage says the chain
    // would refuse is not submitted, and waits as a refused one does (a review's finding).
    it('submits none the chain’s storage says it would refuse, and waits as for a refusal', async () => {
      const commit = jest.fn(() => Promise.reject(new Error('submitted')));
      const { worker, repository, commitments } = workerWith(
        { commit_sha: SHA, state: 'pushed', attempts: 0 },
        {
          onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
          commit,
          windowAhead: () =>
            Promise.resolve({
              rule: 'space',
              acceptedFrom: 6_852_849,
              head: 6_852_692,
              intervalBlocks: EPOCH,
            }),
        },
      );
      await worker.runOnce();
      expect(commit).not.toHaveBeenCalled();
      expect(commitments.commitmentWindow).not.toHaveBeenCalled();
      expect(repository.recordRetry).toHaveBeenCalledWith(
        expect.objectContaining({ version: 3 }),
        'pushed',
        expect.stringMatching(
          /^rate limited by the chain: not submitted: our commitments used this epoch's space/,
        ),
        new Date(NOW.getTime() + (6_852_849 - 6_852_692) * 12_000 + 24_000),
        NOW,
      );
    });

    // The doubling wait of any failure: 12 s × 2² after two refusals.
    it('waits as for any failure when the storage cannot say, or cannot be read', async () => {
      const silent = refused(() => Promise.resolve(undefined));
      await silent.worker.runOnce();
      retriedAfter(silent.repository, 48_000);
      jest.restoreAllMocks();
      const unreadable = refused(() => Promise.reject(new Error('no answer within 10000 ms')));
      await unreadable.worker.runOnce();
      retriedAfter(unreadable.repository, 48_000);
      expect(unreadable.warn).toHaveBeenCalledWith(
        'could not read when the chain takes commitments again: no answer within 10000 ms',
      );
    });
  });

  // A submission takes the registration lock, then writes the tasks and this row; the worker
  // wrote this row, then the tasks: the opposite order, a deadlock (an audit's finding).
  it('records the commitment and its tasks under the registration lock a submission takes first', async () => {
    const { worker, repository, tasks, lock } = workerWith({ commit_sha: SHA, state: 'pushed' });
    const held: boolean[] = [];
    repository.recordCommitted.mockImplementation(() => {
      held.push(lock.held);
      return Promise.resolve(true);
    });
    tasks.recordNetworkRegistration.mockImplementation(() => {
      held.push(lock.held);
      return Promise.resolve();
    });
    await worker.runOnce();
    expect(tasks.registering).toHaveBeenCalledTimes(1);
    expect(held).toEqual([true, true]);
  });

  // The vote sent again unchanged: its push found the file on the head another validator moved,
  // another SHA than ours on chain, whose file is the vote all the same (an audit's finding).
  it('submits nothing when our commitment on chain holds the same file under another SHA', async () => {
    const EARLIER = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    const commit = jest.fn(() => Promise.reject(new Error('submitted')));
    const preferencesAt = jest.fn(() => Promise.resolve({ kind: 'file', text: '[]' }));
    const { worker, repository, tasks } = workerWith(
      { content: '[]', task_ids: [] },
      { onChain: EARLIER, commit, preferencesAt },
    );
    await worker.runOnce();
    expect(commit).not.toHaveBeenCalled();
    expect(preferencesAt).toHaveBeenCalledWith(HOTKEY, EARLIER, 0);
    const committed = { sha: EARLIER, blockNumber: 120, blockHash: null };
    expect(repository.recordCommitted).toHaveBeenCalledWith(
      expect.objectContaining({ version: 3 }),
      committed,
      NOW,
      {},
    );
    expect(tasks.recordNetworkRegistration).toHaveBeenCalledWith(
      [],
      { block: 120, at: NOW, commitSha: EARLIER },
      {},
    );
  });

  // A force push dropped the SHA an earlier attempt pushed: pushed again, on the fetch its check
  // made (the lease counts one fetch: a review's finding).
  it('pushes again, without a second fetch, a vote whose pushed commit the branch no longer has', async () => {
    const STALE = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    const publish = jest.fn((_hotkey: string, _content: string, _options?: unknown) =>
      Promise.resolve({ sha: SHA, pushed: true }),
    );
    const commit = jest.fn(() => Promise.resolve({ blockNumber: 121, blockHash: '0xab' }));
    const onBranch = jest.fn((sha: string) => Promise.resolve(sha !== STALE));
    const { worker } = workerWith(
      { content: '[]', task_ids: [], commit_sha: STALE },
      { publish, commit, onBranch, onChain: STALE },
    );
    await worker.runOnce();
    expect(onBranch).toHaveBeenCalledWith(STALE);
    expect(publish).toHaveBeenCalledWith(HOTKEY, '[]', { fetched: true });
    expect(commit).toHaveBeenCalledWith(SHA);
  });

  // The only trigger of a committed vote's re-publication: its check runs at a replica's first
  // tick and then hourly, not at every tick (a review found no test of either).
  it('checks the committed vote at its first tick and then once an hour, publishing it again when its commit is gone', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const onBranch = jest.fn(() => Promise.resolve(true));
      const { worker, repository, tasks } = workerWith(
        { state: 'committed', commit_sha: SHA, block_number: '120' },
        { due: false, onBranch, found: { version: 3, claimed_by: null } },
      );
      await worker.runOnce();
      await worker.runOnce();
      expect(onBranch.mock.calls).toEqual([[SHA]]);
      jest.advanceTimersByTime(60 * 60_000);
      onBranch.mockResolvedValue(false);
      await worker.runOnce();
      expect(onBranch).toHaveBeenCalledTimes(2);
      expect(repository.restartCommitted).toHaveBeenCalledWith(
        expect.objectContaining({ version: 3, commit_sha: SHA }),
        expect.stringMatching(
          new RegExp(`^commit ${SHA}, committed on chain in block 120, is no longer`),
        ),
        NOW,
      );
      expect(tasks.forgetNetworkRegistration).toHaveBeenCalledWith(SHA);
    } finally {
      jest.useRealTimers();
    }
  });

  // The clone keeps the commits of a history the remote rewrote: our commitment on chain naming
  // one of them is no vote to a reader cloning afresh (an audit's finding).
  it('submits the commitment when our file on chain is at a commit the branch no longer has', async () => {
    const commit = jest.fn(() => Promise.resolve({ blockNumber: 121, blockHash: '0xab' }));
    const onBranch = jest.fn((sha: string) => Promise.resolve(sha === SHA));
    const { worker } = workerWith(
      { content: '[]', task_ids: [] },
      {
        onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        commit,
        preferencesAt: () => Promise.resolve({ kind: 'file', text: '[]' }),
        onBranch,
      },
    );
    await worker.runOnce();
    expect(onBranch).toHaveBeenCalledWith('da39a3ee5e6b4b0d3255bfef95601890afd80709', {
      fetched: true,
    });
    expect(commit).toHaveBeenCalledWith(SHA);
  });

  it('submits the commitment when our file on chain is another, or cannot be read there', async () => {
    for (const file of [
      () => Promise.resolve({ kind: 'file', text: '["another"]' }),
      () => Promise.resolve({ kind: 'no-commit' }),
      () => Promise.reject(new Error('git failed')),
    ]) {
      const commit = jest.fn(() => Promise.resolve({ blockNumber: 121, blockHash: '0xab' }));
      const { worker, repository } = workerWith(
        { content: '[]', task_ids: [] },
        { onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709', commit, preferencesAt: file },
      );
      await worker.runOnce();
      expect(commit).toHaveBeenCalledWith(SHA);
      expect(repository.recordCommitted).toHaveBeenCalledWith(
        expect.anything(),
        { sha: SHA, blockNumber: 121, blockHash: '0xab' },
        NOW,
        {},
      );
      jest.restoreAllMocks();
    }
  });

  // The storage read is a courtesy (it spares a refused extrinsic): failing, it must not hold
  // the vote back, or a node that cannot answer the storage query would stop every commitment.
  it('submits the commitment when whether the chain takes one now cannot be read, saying so', async () => {
    const commit = jest.fn(() => Promise.resolve({ blockNumber: 121, blockHash: '0xab' }));
    const { worker, repository, warn } = workerWith(
      { content: '[]', task_ids: [] },
      {
        onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        commit,
        windowAhead: () => Promise.reject(new Error('no answer within 10000 ms')),
      },
    );
    await worker.runOnce();
    expect(commit).toHaveBeenCalledWith(SHA);
    expect(repository.recordCommitted).toHaveBeenCalledWith(
      expect.anything(),
      { sha: SHA, blockNumber: 121, blockHash: '0xab' },
      NOW,
      {},
    );
    expect(repository.recordRetry).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledWith(
      'could not read whether the chain takes a commitment now, submitting: no answer within 10000 ms',
    );
  });

  // A claim kept after a lost commit record would hold the newer vote back for a whole lease.
  it('lets its claim go, and registers no task, when a newer vote replaced the one it committed', async () => {
    const { worker, repository, tasks } = workerWith(
      { commit_sha: SHA, state: 'pushed' },
      { recordCommitted: () => Promise.resolve(false) },
    );
    await worker.runOnce();
    expect(repository.recordCommitted).toHaveBeenCalledTimes(1);
    expect(tasks.recordNetworkRegistration).not.toHaveBeenCalled();
    expect(repository.release).toHaveBeenCalledTimes(1);
  });

  // A vote replaced while the chain was read was still submitted: its outdated SHA took the
  // epoch's commitment space (an audit's finding).
  it('submits nothing when a newer vote replaced the claimed one while the chain was read', async () => {
    const commit = jest.fn(() => Promise.resolve({ blockNumber: 121, blockHash: '0xab' }));
    const { worker, repository, log } = workerWith(
      { commit_sha: SHA, state: 'pushed', content: '[]', task_ids: [] },
      {
        onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        commit,
        holds: () => Promise.resolve(false),
      },
    );
    await worker.runOnce();
    expect(commit).not.toHaveBeenCalled();
    expect(repository.recordCommitted).not.toHaveBeenCalled();
    expect(repository.release).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith('vote 3 was replaced by a newer vote before it was published');
  });

  it('says a vote replaced after its commitment was included is on chain', async () => {
    const commit = jest.fn(() => Promise.resolve({ blockNumber: 121, blockHash: '0xab' }));
    const { worker, log } = workerWith(
      { commit_sha: SHA, state: 'pushed', content: '[]', task_ids: [] },
      {
        onChain: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        commit,
        recordCommitted: () => Promise.resolve(false),
      },
    );
    await worker.runOnce();
    expect(commit).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith(
      `vote 3 was committed on chain in block 121 (${SHA}), then replaced by a newer vote, which is published next`,
    );
  });
});
