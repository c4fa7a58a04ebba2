import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Clock } from '../../src/common/clock/clock';
import { MetricsService } from '../../src/common/metrics/metrics.service';
import { DesirabilityRepository } from '../../src/modules/desirability/desirability.repository';
import { JobView } from '../../src/modules/desirability/desirability.types';
import { StoredVotePublication } from '../../src/modules/desirability/stored-vote-publication';
import { PublicationRepository } from '../../src/modules/publication/publication.repository';
import { PublicationService } from '../../src/modules/publication/publication.service';
import { publishedFile } from '../../src/modules/publication/publication.types';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { TasksService } from '../../src/modules/tasks/tasks.service';
import { ValidatorIdentity } from '../../src/network/bittensor/validator-identity';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { subtensorAt, testConfig } from '../support/test-config';

const VOTED = new Date('2026-11-30T12:00:00Z');
const job = (id: string, label: string | null, weight: number): JobView => ({
  id,
  weight,
  params: {
    platform: 'x',
    label,
    keyword: null,
    post_start_datetime: null,
    post_end_datetime: null,
  },
});
const OLD_VOTE = [job('old-tao', '#tao', 1)];
/** Its keyword-only job stays local, as when a vote is queued by its submission. */
const NEW_VOTE = [job('new-btc', '#btc', 0.5), job('new-kw', null, 0.5)];

/**
 * A vote stored while publication was disabled (no GRAVITY_REPO_URL) queued nothing; the first
 * start with publication enabled queues it, once whichever replicas start, against Postgres.
 */
describe(StoredVotePublication.name, () => {
  let medium: MediumDatabase;
  let votes: DesirabilityRepository;
  let rows: PublicationRepository;
  let tasks: TasksService;

  let logged: jest.SpyInstance;

  beforeAll(async () => {
    // The line saying a vote was queued late.
    logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    medium = await openMediumDatabase();
    votes = new DesirabilityRepository(medium.dataSource);
    rows = new PublicationRepository(medium.dataSource);
    tasks = new TasksService(new TasksRepository(medium.dataSource), new Clock(), testConfig());
  });
  afterAll(() => medium.close());

  /** One replica's services, publication enabled or not; a hotkey of its own per test. */
  const replica = (
    hotkey: string,
    enabled = true,
    { repoUrl = 'file:///srv/gravity.git', branch = 'main', netuid = 13 } = {},
  ) => {
    const config = testConfig({
      netuid,
      gravity: { repoUrl: enabled ? repoUrl : undefined, branch },
      network: { subtensor: subtensorAt('ws://127.0.0.1:9944') },
    });
    const identity = { hotkey } as ValidatorIdentity;
    const publication = new PublicationService(
      rows,
      identity,
      tasks,
      new Clock(),
      new MetricsService(),
      config,
    );
    return {
      publication,
      stored: new StoredVotePublication(votes, tasks, publication, identity, lifecycle),
    };
  };
  /** The lifecycle passes are this spec's to run (dropEndedTasks). */
  const lifecycle = { onEachPass: () => undefined } as unknown as TaskLifecycleService;
  const newHotkey = () => `5${randomUUID().replaceAll('-', '')}`;
  const storeVote = (hotkey: string, jobs: JobView[]) =>
    medium.dataSource.transaction((manager) => votes.saveVote(hotkey, [], jobs, VOTED, manager));
  const queueThroughSubmission = (hotkey: string, jobs: JobView[]) =>
    medium.dataSource.transaction((manager) =>
      replica(hotkey).publication.enqueue(hotkey, jobs, manager),
    );

  it('queues a vote stored while publication was disabled once, when two replicas start together', async () => {
    const hotkey = newHotkey();
    const disabled = replica(hotkey, false);
    await storeVote(hotkey, NEW_VOTE);
    await disabled.stored.onApplicationBootstrap();
    expect(await rows.find(hotkey)).toBeUndefined();

    const [first, second] = [replica(hotkey), replica(hotkey)];
    expect(await first.publication.status()).toMatchObject({ state: 'none' });
    const queued = await Promise.all([first.stored.queue(), second.stored.queue()]);

    expect(queued.sort()).toEqual([false, true]);
    expect(await rows.find(hotkey)).toMatchObject({
      state: 'pending',
      version: 1,
      content: publishedFile([NEW_VOTE[0]]),
      task_ids: ['new-btc'],
      voted_at: VOTED,
    });
    expect(await first.publication.status()).toMatchObject({ state: 'pending' });
  });

  it('queues a vote stored over the row of an older one, and nothing once the row holds it', async () => {
    const hotkey = newHotkey();
    await queueThroughSubmission(hotkey, OLD_VOTE);
    await storeVote(hotkey, NEW_VOTE);
    const { stored } = replica(hotkey);

    expect(await stored.queue()).toBe(true);
    expect(await rows.find(hotkey)).toMatchObject({
      version: 2,
      content: publishedFile([NEW_VOTE[0]]),
    });
    expect(await stored.queue()).toBe(false);
    expect(await rows.find(hotkey)).toMatchObject({ version: 2 });
  });

  it('queues the withdrawal of a vote withdrawn while publication was disabled', async () => {
    const hotkey = newHotkey();
    await queueThroughSubmission(hotkey, OLD_VOTE);
    const { stored } = replica(hotkey);

    expect(await stored.queue()).toBe(true);
    expect(await rows.find(hotkey)).toMatchObject({ version: 2, content: '[]', task_ids: [] });
    expect(await stored.queue()).toBe(false);
  });

  it('queues nothing without a vote, nor with publication disabled', async () => {
    const nobody = newHotkey();
    expect(await replica(nobody).stored.queue()).toBe(false);
    expect(await rows.find(nobody)).toBeUndefined();

    const hotkey = newHotkey();
    await storeVote(hotkey, NEW_VOTE);
    expect(await replica(hotkey, false).stored.queue()).toBe(false);
    expect(await rows.find(hotkey)).toBeUndefined();
  });

  it('queues the vote again without a task that ended, once whichever replicas look', async () => {
    const hotkey = newHotkey();
    const [tao, btc] = [job(`${hotkey}-tao`, '#tao', 0.75), job(`${hotkey}-btc`, '#btc', 0.25)];
    await tasks.registering((manager) =>
      tasks.register(
        hotkey,
        [tao, btc].map(({ id, params }) => ({
          id,
          platform: 'x' as const,
          label: params.label,
          keyword: null,
          postStart: null,
          postEnd: null,
        })),
        10,
        manager,
      ),
    );
    await storeVote(hotkey, [tao, btc]);
    await queueThroughSubmission(hotkey, [tao, btc]);
    const [first, second] = [replica(hotkey), replica(hotkey)];
    expect(await first.stored.dropEndedTasks()).toBe(false);

    // Its seven days over, not yet compiled: ended all the same, as the aggregate has it.
    await medium.dataSource.query(
      `UPDATE scraping_tasks SET expires_at = now() - interval '1 minute' WHERE id = $1`,
      [tao.id],
    );
    const queued = await Promise.all([
      first.stored.dropEndedTasks(),
      second.stored.dropEndedTasks(),
    ]);

    expect(queued.sort()).toEqual([false, true]);
    expect(await rows.find(hotkey)).toMatchObject({
      state: 'pending',
      version: 2,
      content: publishedFile([btc]),
      task_ids: [btc.id],
      voted_at: VOTED,
    });
    expect(await first.stored.dropEndedTasks()).toBe(false);
    expect(await replica(hotkey, false).stored.dropEndedTasks()).toBe(false);
  });

  /** The vote queued through its submission to `target`, then failed there an hour's wait. */
  const failedAt = async (hotkey: string, target: Parameters<typeof replica>[2] = {}) => {
    await medium.dataSource.transaction((manager) =>
      replica(hotkey, true, target).publication.enqueue(hotkey, NEW_VOTE, manager),
    );
    const now = new Date();
    const row = (await rows.claim(hotkey, 'old-replica', now, new Date(now.getTime() + 60_000)))!;
    const claim = { hotkey, version: row.version, claimant: 'old-replica' };
    await rows.recordPushed(claim, '3f786850e387550fdab836ed7e6dc881de23001b', now);
    const hourLater = new Date(now.getTime() + 3_600_000);
    await rows.recordRetry(claim, 'failed', 'commit failed: the old chain', hourLater, now);
  };

  it.each([
    [
      'GRAVITY_REPO_URL',
      { repoUrl: 'file:///srv/corrected.git' },
      'file:///srv/corrected.git#main on netuid 13',
    ],
    ['GRAVITY_BRANCH', { branch: 'votes' }, 'file:///srv/gravity.git#votes on netuid 13'],
    ['NETUID', { netuid: 21 }, 'file:///srv/gravity.git#main on netuid 21'],
  ])(
    'starts a publication made before %s changed afresh, due now, and logs the old target’s state',
    async (_setting, changed, target) => {
      const hotkey = newHotkey();
      await storeVote(hotkey, NEW_VOTE);
      await failedAt(hotkey);
      const before = await rows.find(hotkey);
      logged.mockClear();

      const { stored, publication } = replica(hotkey, true, changed);
      const started = Date.now();
      expect(await stored.queue()).toBe(false);

      const after = (await rows.find(hotkey))!;
      expect(after).toMatchObject({
        state: 'pending',
        version: before!.version,
        content: before!.content,
        attempts: 0,
        commit_sha: null,
        last_error: null,
        claimed_by: null,
        target,
      });
      expect(after.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());
      expect(after.next_attempt_at.getTime()).toBeGreaterThanOrEqual(started - 1000);
      expect(await publication.status()).not.toHaveProperty('last_error');
      expect(logged.mock.calls.map(([line]) => line as string)).toContainEqual(
        `vote ${before!.version} was being published to file:///srv/gravity.git#main on netuid 13 ` +
          '(failed, 1 failed attempts, last error: commit failed: the old chain); votes now go ' +
          `to ${target}: its publication starts afresh there`,
      );
    },
  );

  it('leaves a publication to the same target as it is, its wait included', async () => {
    const hotkey = newHotkey();
    await storeVote(hotkey, NEW_VOTE);
    await failedAt(hotkey);
    const before = await rows.find(hotkey);

    expect(await replica(hotkey).stored.queue()).toBe(false);
    expect(await rows.find(hotkey)).toEqual(before);
  });

  it('records the target of a row from before targets were recorded, and leaves the rest', async () => {
    const hotkey = newHotkey();
    await storeVote(hotkey, NEW_VOTE);
    await failedAt(hotkey);
    await medium.dataSource.query(
      'UPDATE desirability_publications SET target = NULL WHERE hotkey = $1',
      [hotkey],
    );
    const before = await rows.find(hotkey);

    expect(await replica(hotkey).stored.queue()).toBe(false);
    expect(await rows.find(hotkey)).toEqual({
      ...before,
      target: 'file:///srv/gravity.git#main on netuid 13',
    });
  });
});
