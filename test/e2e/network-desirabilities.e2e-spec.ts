import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainReplay, startChainReplay } from '../support/chain-replay';
import { isLocal, recordConnections } from '../support/connections';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { createGravityRemote, GravityRemote } from '../support/gravity-remote';
import { startTestApp, TEST_MASTER_KEY, TestApp, testValidatorHotkey } from '../support/test-app';

/**
 * Reading the network's votes: validators' commitments on a chain stand-in (the recorded
 * finney node for netuid 1, on 127.0.0.1, with commitments the test sets) and their files in a
 * Gravity stand-in (a bare git repository reached as file://). Nothing leaves the machine: the
 * recording lists public addresses, the gateway may call loopback only, and every connection
 * this process opens is checked.
 */
const NETUID = 1;
const PREFERENCES = (hotkey: string) => `validator_preferences/${hotkey}.json`;
/** A neuron of the recording without a validator permit. */
const NO_PERMIT_HOTKEY = '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ';
/** A neuron of the recording with a validator permit but 5,770 TAO: a miner to subnet 13. */
const LOW_STAKE_UID = 496;
const NOT_A_VALIDATOR =
  'not a validator on the subnet (a validator permit and 10,000 TAO of stake)';
/** A Raw40 commitment that is no SHA. */
const NOT_A_SHA = 'not a sha, but forty characters long....';

const OWNER_LIST = [
  { id: 'owner-tao', weight: 1, params: { platform: 'x', label: '#tao' } },
  { id: 'owner-btc', weight: 1, params: { platform: 'reddit', label: 'r/bitcoin' } },
];
const VOTE_A = [
  { id: 'a-tao', weight: 3, params: { platform: 'x', label: '#tao' } },
  { id: 'a-eth', weight: 1, params: { platform: 'x', label: '#eth' } },
];
const VOTE_B = [{ source_name: 'reddit', label_weights: { 'r/bitcoin': 1 } }];

interface NetworkStatus {
  source: string;
  computed_at?: string;
  age_seconds?: number;
  validators: { hotkey: string; stake: number; share: number; sha: string; block: number }[];
  skipped: { hotkey: string; reason: string; sha?: string; block?: number }[];
  last_attempt?: { ok: boolean; at: string; error?: string };
}

const params = (platform: string, label: string) => ({
  platform,
  label,
  keyword: null,
  post_start_datetime: null,
  post_end_datetime: null,
});

describe('The network’s votes and aggregate (chain commitments and the Gravity repository)', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  const databaseName = scratchDatabaseName('netvotes');
  let databaseUrl: string;
  let replay: ChainReplay;
  let gravity: GravityRemote;
  let dataDir: string;
  let app: TestApp;
  let connections: ReturnType<typeof recordConnections>;
  let validators: { hotkey: string; stake: number }[];
  let lowStake: { hotkey: string; stake: number; validator_permit: boolean };
  let commitA: string;
  let commitB: string;

  const get = (path: string) => app.http.get(path).set('X-API-Key', TEST_MASTER_KEY);
  const networkStatus = async () =>
    (await get('/api/v1/desirabilities/network').expect(200)).body as NetworkStatus;
  /** Waits for the background job (every second here) to have computed what `until` wants. */
  const eventually = async (until: (status: NetworkStatus) => boolean): Promise<NetworkStatus> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await networkStatus();
      if (until(status)) return status;
      if (Date.now() > deadline)
        throw new Error(`not reached in time: ${JSON.stringify(status, null, 1)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  beforeAll(async () => {
    connections = recordConnections();
    databaseUrl = await createDatabase(serverUrl(), databaseName);
    replay = await startChainReplay();
    gravity = createGravityRemote();
    dataDir = mkdtempSync(join(tmpdir(), 'netvotes-data-'));
    const ownerFile = join(dataDir, 'owner.json');
    writeFileSync(ownerFile, JSON.stringify(OWNER_LIST));
    app = await startTestApp({
      DATABASE_URL: databaseUrl,
      SUBTENSOR_URL: replay.url,
      NETUID: String(NETUID),
      MINER_ALLOWED_NETWORKS: 'loopback',
      // The replay answers; reads of 1,024 neurons take seconds on a loaded machine.
      SUBTENSOR_TIMEOUT_MS: '60000',
      GRAVITY_REPO_URL: gravity.url,
      GRAVITY_BRANCH: 'main',
      DESIRABILITY_SYNC_INTERVAL: '1',
      DATA_DIR: dataDir,
      DEFAULT_DESIRABILITIES_FILE: ownerFile,
    });
    const miners = (await get('/api/v1/miners?state=validator').expect(200)).body as {
      miners: { hotkey: string; stake: number }[];
    };
    validators = miners.miners.slice(0, 7);
    [lowStake] = (await get(`/api/v1/miners?uid=${LOW_STAKE_UID}`).expect(200)).body.miners;
    const [a, b, , , e, f] = validators.map((validator) => validator.hotkey);

    // First commit: A and B vote. Second: A changes its mind (the branch head moves, its
    // commitment stays on the first), E's file is not JSON, F's breaks the submission rules.
    commitA = gravity.commit({
      [PREFERENCES(a)]: JSON.stringify(VOTE_A, null, 4),
      [PREFERENCES(b)]: JSON.stringify(VOTE_B, null, 4),
    });
    commitB = gravity.commit({
      [PREFERENCES(a)]: JSON.stringify([
        { id: 'a-later', weight: 1, params: { platform: 'x', label: '#later' } },
      ]),
      [PREFERENCES(e)]: '{"not json',
      [PREFERENCES(f)]: JSON.stringify([
        { id: 'f-zero', weight: 0, params: { platform: 'x', label: '#zero' } },
      ]),
    });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await replay?.stop();
    gravity?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await dropDatabase(serverUrl(), databaseName);
    connections.stop();
  });

  it('aggregates the votes at the committed SHAs by stake with the owner’s list, and says why the others are no vote', async () => {
    const [a, b, c, d, e, f, g] = validators.map((validator) => validator.hotkey);
    replay.setCommitment(NETUID, a, commitA, 100);
    replay.setCommitment(NETUID, b, commitA, 101);
    replay.setCommitment(NETUID, c, NOT_A_SHA, 102);
    replay.setCommitment(NETUID, d, 'f'.repeat(40), 103);
    replay.setCommitment(NETUID, e, commitB, 104);
    replay.setCommitment(NETUID, f, commitB, 105);
    replay.setCommitment(NETUID, NO_PERMIT_HOTKEY, commitA, 106);
    replay.setCommitmentFields(NETUID, g, [{ Sha256: `0x${'11'.repeat(32)}` }], 107);
    expect(lowStake).toMatchObject({ validator_permit: true, stake: expect.closeTo(5_770.07, 2) });
    replay.setCommitment(NETUID, lowStake.hotkey, commitA, 108);

    const status = await eventually(
      (candidate) => candidate.validators.length === 2 && candidate.skipped.length === 7,
    );
    const [stakeA, stakeB] = [validators[0].stake, validators[1].stake];
    const shareA = stakeA / (stakeA + stakeB);
    const shareB = stakeB / (stakeA + stakeB);
    expect(status.source).toBe('network');
    expect(status.validators).toEqual(
      [
        { hotkey: a, stake: stakeA, share: round(shareA), sha: commitA, block: 100, jobs: 2 },
        { hotkey: b, stake: stakeB, share: round(shareB), sha: commitA, block: 101, jobs: 1 },
      ].sort((x, y) => (x.hotkey < y.hotkey ? -1 : 1)),
    );
    const reasons = Object.fromEntries(status.skipped.map((entry) => [entry.hotkey, entry.reason]));
    expect(reasons).toEqual({
      [c]: 'the commitment is not a git SHA (40 hex characters)',
      [d]: `commit ${'f'.repeat(40)} is not in the Gravity repository`,
      [e]: expect.stringMatching(new RegExp(`^${PREFERENCES(e)} at ${commitB} is not valid JSON`)),
      [f]: expect.stringContaining(
        'breaks the submission rules: [0,"weight"]: Input should be greater than 0',
      ),
      [NO_PERMIT_HOTKEY]: NOT_A_VALIDATOR,
      [g]: 'the commitment is a Sha256, not raw bytes (a git SHA)',
      [lowStake.hotkey]: NOT_A_VALIDATOR,
    });

    // By hand: owner 0.3 × ½ each; A's 0.7 × shareA × (¾ #tao, ¼ #eth); B's 0.7 × shareB × r/bitcoin.
    const expected = [
      { id: 'owner-tao', weight: round(0.15 + 0.7 * shareA * 0.75), params: params('x', '#tao') },
      {
        id: 'owner-btc',
        weight: round(0.15 + 0.7 * shareB),
        params: params('reddit', 'r/bitcoin'),
      },
      { id: 'a-eth', weight: round(0.7 * shareA * 0.25), params: params('x', '#eth') },
    ].sort((x, y) => y.weight - x.weight);
    const answer = await get('/api/v1/get_desirabilities').expect(200);
    expect(answer.body).toEqual(expected);
    expect(answer.headers['x-aggregate-source']).toBe('network');
    expect(answer.headers['x-total-count']).toBe('3');
    expect(Number(answer.headers.age)).toBeGreaterThanOrEqual(0);
    expect(answer.headers['x-aggregate-computed-at']).toBe(status.computed_at);
  }, 30_000);

  it('answers a validator’s submission at its committed SHA, not at the branch head', async () => {
    const [a] = validators.map((validator) => validator.hotkey);
    expect(gravity.head()).toBe(commitB);
    const answer = await get(`/api/v1/get_desirabilities?hotkey=${a}`).expect(200);
    expect(answer.body).toEqual(VOTE_A);
    expect(answer.headers['x-commitment-sha']).toBe(commitA);
    expect(answer.headers['x-commitment-block']).toBe('100');
    expect(answer.headers['x-vote-published']).toBeUndefined();
  });

  it('answers 404 with the reason for a hotkey without a commitment or with one that is no vote', async () => {
    const [, , c] = validators.map((validator) => validator.hotkey);
    const none = await get(`/api/v1/get_desirabilities?hotkey=${testValidatorHotkey()}`).expect(
      404,
    );
    expect(none.body.detail).toBe(
      `No desirabilities submitted by hotkey ${testValidatorHotkey()}: it has no commitment on subnet ${NETUID}`,
    );
    const bad = await get(`/api/v1/get_desirabilities?hotkey=${c}`).expect(404);
    expect(bad.body.detail).toMatch(/is no vote: the commitment is not a git SHA/);
  });

  it('says whether our own latest vote is the one published', async () => {
    const own = testValidatorHotkey();
    const vote = [{ id: 'own-tao', weight: 2, params: { platform: 'x', label: '#tao' } }];
    await get('/api/v1/get_desirabilities'); // any earlier state is irrelevant
    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ desirabilities: vote })
      .expect(200);
    // What a publisher pushes: the normalized jobs.
    const published = gravity.commit({
      [PREFERENCES(own)]: JSON.stringify([{ ...vote[0], weight: 1 }], null, 4),
    });
    replay.setCommitment(NETUID, own, published, 200);
    const answer = await get(`/api/v1/get_desirabilities?hotkey=${own}`).expect(200);
    expect(answer.headers['x-vote-published']).toBe('true');
    expect(answer.headers['x-commitment-sha']).toBe(published);

    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({
        desirabilities: [
          { ...vote[0], weight: 1 },
          { id: 'own-eth', weight: 1, params: { platform: 'x', label: '#eth' } },
        ],
      })
      .expect(200);
    const newer = await get(`/api/v1/get_desirabilities?hotkey=${own}`).expect(200);
    expect(newer.headers['x-vote-published']).toBe('false');
  });

  it('serves the last good aggregate, with its age, while the chain is out of reach', async () => {
    const before = await get('/api/v1/get_desirabilities').expect(200);
    await replay.stop();
    const status = await eventually((candidate) => candidate.last_attempt?.ok === false);
    expect(status.last_attempt?.error).toEqual(expect.any(String));
    expect(status.validators).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await get('/api/v1/get_desirabilities').expect(200);
    expect(after.body).toEqual(before.body);
    expect(after.headers['x-aggregate-computed-at']).toBe(
      before.headers['x-aggregate-computed-at'],
    );
    expect(Number(after.headers.age)).toBeGreaterThanOrEqual(1);
    const lookup = await get(`/api/v1/get_desirabilities?hotkey=${validators[0].hotkey}`).expect(
      503,
    );
    expect(lookup.body.detail).toMatch(/^The chain cannot be read now/);
  }, 40_000);

  it('never connected outside the machine', () => {
    expect(connections.destinations.length).toBeGreaterThan(0);
    expect(connections.destinations.filter((destination) => !isLocal(destination))).toEqual([]);
  });
});

function round(weight: number): number {
  return Number(weight.toPrecision(12));
}
