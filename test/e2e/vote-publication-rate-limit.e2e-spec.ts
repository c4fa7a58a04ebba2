import { PublicationWorker } from '../../src/modules/publication/publication-worker.service';
import { createKey } from '../support/fixtures';
import { NetworkStandIns, startNetworkStandIns } from '../support/network-stand-ins';
import { startTestApp, TestApp, testValidatorHotkey } from '../support/test-app';

/**
 * The chain refusing a commitment as too soon, against the chain stand-in's model of the
 * recorded runtime's space rule (chain-extrinsics.ts): with `MaxSpace` at 100, one commitment
 * per subnet epoch. Each refused commitment is included in a block and pays a fee, so the
 * worker submits none the chain's storage says it would refuse, and retries when the storage
 * says it will take it (docs/decisions.md, "The rate limit."), not after the doubling wait of
 * any other failure.
 */
const NETUID = 1;
/** The subnet's epochs: `Tempo` (360, the recorded runtime's default) + 1 blocks. */
const EPOCH_BLOCKS = 361;
const BLOCK_MS = 12_000;
/** Two blocks past the one the chain takes commitments again from. */
const MARGIN_MS = 2 * BLOCK_MS;

interface PublicationStatus {
  state: string;
  last_error?: string;
  next_attempt_at?: string;
  attempts: number;
}

/** The first block of the epoch after `block`'s, as subtensor counts epochs (offset netuid + 1). */
function nextEpochStart(block: number): number {
  return (Math.floor((block + NETUID + 1) / EPOCH_BLOCKS) + 1) * EPOCH_BLOCKS - (NETUID + 1);
}

describe('Publishing the vote when the chain says it is too soon', () => {
  const hotkey = testValidatorHotkey();
  let standIns: NetworkStandIns;
  let app: TestApp;
  let validatorKey: string;

  const worker = () => app.app.get(PublicationWorker);
  const submit = (suffix: string) =>
    app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', validatorKey)
      .send({
        desirabilities: [
          { id: `rl-${suffix}`, weight: 1, params: { platform: 'x', label: '#tao' } },
        ],
      })
      .expect(200);
  const publication = async () =>
    (
      await app.http
        .get('/api/v1/desirabilities/publication')
        .set('X-API-Key', validatorKey)
        .expect(200)
    ).body as PublicationStatus;
  /** Runs the worker once; the time before and after, which the next attempt counts from. */
  const timedRun = async () => {
    const before = Date.now();
    await worker().runOnce();
    return { before, after: Date.now() };
  };
  /** The wait is over (the test does not sleep for half an hour). */
  const makeDue = () =>
    standIns.database.query(
      `UPDATE desirability_publications SET next_attempt_at = now() - interval '1 second'`,
    );
  /**
   * The chain reaches the epoch starting at `reset`, the wait is over, and the worker commits
   * the vote waiting: one more submission than `before`, taken.
   */
  const commitsOnceTheEpochTurns = async (reset: number, before: number) => {
    standIns.replay.extrinsics.advanceTo(reset);
    await makeDue();
    await worker().runOnce();
    expect(await publication()).toMatchObject({ state: 'committed', attempts: 0 });
    expect(standIns.replay.extrinsics.submitted).toHaveLength(before + 1);
    return standIns.replay.extrinsics.submitted.at(-1)!;
  };
  const refusals = (from: number) =>
    standIns.replay.extrinsics.submitted.slice(from).filter((ext) => ext.outcome !== 'success');

  beforeAll(async () => {
    standIns = await startNetworkStandIns('ratelimit', NETUID);
    standIns.replay.extrinsics.maxSpace = 100;
    app = await startTestApp({
      ...standIns.environment(),
      // The retry waits are the defaults.
      PUBLICATION_RETRY_MS: '12000',
      PUBLICATION_RETRY_MAX_MS: '3600000',
    });
    validatorKey = (await createKey(app, { tier: 'validator' })).key;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await standIns?.stop();
  }, 60_000);

  it('retries when the chain takes commitments again, submitting none it would refuse', async () => {
    await submit('a');
    await worker().runOnce();
    expect((await publication()).state).toBe('committed');
    const extrinsics = standIns.replay.extrinsics.submitted.length;
    const committedIn = standIns.replay.extrinsics.submitted.at(-1)!.blockNumber;

    // A second vote in the same epoch: its commitment would not fit in the space left, so it
    // is pushed and waits, as if refused, without paying for a refusal.
    await submit('b');
    const { before, after } = await timedRun();
    const waiting = await publication();
    expect(waiting).toMatchObject({ state: 'pushed', attempts: 1 });
    expect(waiting.last_error).toMatch(
      /^rate limited by the chain: not submitted: our commitments used this epoch's space/,
    );
    expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics);
    const reset = nextEpochStart(committedIn);
    const wait = (reset - standIns.replay.extrinsics.head) * BLOCK_MS + MARGIN_MS;
    expect(wait).toBeGreaterThan(10 * 60_000); // not the 12 s of the first doubling wait
    const next = Date.parse(waiting.next_attempt_at!);
    expect(next).toBeGreaterThanOrEqual(before + wait);
    expect(next).toBeLessThanOrEqual(after + wait);

    // Not due: nothing is submitted meanwhile.
    await worker().runOnce();
    expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics);

    // The chain reaches the new epoch, and the wait is over: the commitment goes in.
    expect(await commitsOnceTheEpochTurns(reset, extrinsics)).toMatchObject({
      outcome: 'success',
      blockNumber: reset + 1,
    });
    expect(refusals(extrinsics)).toHaveLength(0);
  });

  // No UsedSpaceOf to tell when (the refusal is forced): the doubling wait, 12 s after a push.
  it('waits as for any failure when the chain’s storage does not say when', async () => {
    standIns.replay.setUsedSpace(NETUID, hotkey, undefined);
    standIns.replay.extrinsics.failNext(1);
    await submit('c');
    const { before, after } = await timedRun();
    const waiting = await publication();
    expect(waiting).toMatchObject({ state: 'pushed', attempts: 1 });
    expect(waiting.last_error).toMatch(
      /^rate limited by the chain: commitments\.SpaceLimitExceeded/,
    );
    const next = Date.parse(waiting.next_attempt_at!);
    expect(next).toBeGreaterThanOrEqual(before + 12_000);
    expect(next).toBeLessThanOrEqual(after + 12_000);

    await makeDue();
    await worker().runOnce();
    expect((await publication()).state).toBe('committed');
  });

  // A client told "rate limited" votes again: its vote, pushed, waits for the same epoch's end,
  // and no commitment the chain would refuse (each refusal pays a fee) is submitted meanwhile.
  it('submits no commitment the chain has no room for, for a vote or for a newer one meanwhile', async () => {
    const extrinsics = standIns.replay.extrinsics.submitted.length;
    const committedIn = standIns.replay.extrinsics.submitted.at(-1)!.blockNumber;
    const reset = nextEpochStart(committedIn);
    const wait = () => (reset - standIns.replay.extrinsics.head) * BLOCK_MS + MARGIN_MS;
    const waitsForTheEpoch = async (attempts: number) => {
      const { before, after } = await timedRun();
      const waiting = await publication();
      expect(waiting).toMatchObject({ state: 'pushed', attempts });
      expect(waiting.last_error).toMatch(/^rate limited by the chain: /);
      const next = Date.parse(waiting.next_attempt_at!);
      expect(next).toBeGreaterThanOrEqual(before + wait());
      expect(next).toBeLessThanOrEqual(after + wait());
    };

    await submit('d');
    await waitsForTheEpoch(1);
    await submit('e');
    await waitsForTheEpoch(1);
    expect(refusals(extrinsics)).toEqual([]);
    expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics);

    expect((await commitsOnceTheEpochTurns(reset, extrinsics)).outcome).toBe('success');
  });
});
