import { randomUUID } from 'node:crypto';
import { PublicationRepository } from '../../src/modules/publication/publication.repository';
import { Claim } from '../../src/modules/publication/publication.types';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';
const TARGET = 'file:///srv/gravity.git#main on netuid 13';
const T0 = new Date('2026-11-30T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/**
 * What keeps a vote's publication right across replicas lives in this repository's SQL: a newer
 * vote restarts the row, and a worker's writes name the version and the claim it holds. The
 * worker's unit spec fakes the repository and the e2e spec sees only one order of events: here
 * each rule is checked against Postgres.
 */
describe(PublicationRepository.name, () => {
  let medium: MediumDatabase;
  let repository: PublicationRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase();
    repository = new PublicationRepository(medium.dataSource);
  });
  afterAll(() => medium.close());

  /** A hotkey of its own per test: the run's database is shared. */
  const newHotkey = () => `5${randomUUID().replaceAll('-', '')}`;
  const enqueue = (hotkey: string, content: string, now: Date) =>
    medium.dataSource.transaction((manager) =>
      repository.enqueue(hotkey, content, ['tao'], now, now, TARGET, manager),
    );
  const claim = async (hotkey: string, claimant: string, now: Date): Promise<Claim> => {
    const row = await repository.claim(hotkey, claimant, now, at(60));
    if (!row) throw new Error(`${claimant} got no claim`);
    return { hotkey, version: row.version, claimant };
  };

  it('restarts a vote replaced after a failed commit from the push: no SHA, no failures, the next version', async () => {
    const hotkey = newHotkey();
    await enqueue(hotkey, '["first"]', T0);
    const first = await claim(hotkey, 'a', T0);
    expect(await repository.recordPushed(first, SHA, at(1))).toBe(true);
    expect(await repository.recordRetry(first, 'failed', 'commit failed', at(30), at(2))).toBe(
      true,
    );
    expect(await repository.find(hotkey)).toMatchObject({ attempts: 1, commit_sha: SHA });

    await enqueue(hotkey, '["second"]', at(3));

    expect(await repository.find(hotkey)).toMatchObject({
      state: 'pending',
      version: first.version + 1,
      content: '["second"]',
      attempts: 0,
      next_attempt_at: at(3),
      commit_sha: null,
      pushed_at: null,
      last_error: null,
    });
  });

  it('lets a worker whose vote was replaced change nothing', async () => {
    const hotkey = newHotkey();
    await enqueue(hotkey, '["first"]', T0);
    const first = await claim(hotkey, 'a', T0);
    expect(await repository.holds(first)).toBe(true);
    await enqueue(hotkey, '["second"]', at(1));

    // What the worker asks just before submitting a commitment.
    expect(await repository.holds(first)).toBe(false);
    expect(await repository.recordPushed(first, SHA, at(2))).toBe(false);
    expect(await repository.find(hotkey)).toMatchObject({ state: 'pending', commit_sha: null });
  });

  it('hands a claim over only once it ran out, and then lets only the new holder record or release', async () => {
    const hotkey = newHotkey();
    await enqueue(hotkey, '["vote"]', T0);
    const dead = await claim(hotkey, 'dead', T0);
    // Held until at(60): nobody else gets it before.
    expect(await repository.claim(hotkey, 'live', at(59), at(120))).toBeUndefined();
    const live = await claim(hotkey, 'live', at(61));
    expect(live.version).toBe(dead.version);

    expect(await repository.holds(dead)).toBe(false);
    expect(await repository.holds(live)).toBe(true);
    expect(await repository.recordPushed(dead, SHA, at(62))).toBe(false);
    await repository.release(dead);
    expect(await repository.find(hotkey)).toMatchObject({ claimed_by: 'live', commit_sha: null });
    expect(await repository.recordPushed(live, SHA, at(63))).toBe(true);
  });

  it('never claims a committed vote, nor one not due yet', async () => {
    const hotkey = newHotkey();
    await enqueue(hotkey, '["vote"]', T0);
    const holder = await claim(hotkey, 'a', T0);
    await repository.recordRetry(holder, 'failed', 'push failed', at(30), at(1));
    expect(await repository.claim(hotkey, 'a', at(29), at(90))).toBeUndefined();

    const again = await claim(hotkey, 'a', at(30));
    await repository.recordPushed(again, SHA, at(31));
    await medium.dataSource.transaction((manager) =>
      repository.recordCommitted(
        again,
        { sha: SHA, blockNumber: 7, blockHash: null },
        at(32),
        manager,
      ),
    );
    expect(await repository.find(hotkey)).toMatchObject({ state: 'committed', claimed_by: null });
    expect(await repository.claim(hotkey, 'a', at(3600), at(3660))).toBeUndefined();
  });
});
