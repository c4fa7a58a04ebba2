import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeAddress, encodeAddress } from '@polkadot/util-crypto';
import { ChainReplay } from '../support/chain-replay';
import { isLocal, recordConnections } from '../support/connections';
import { GravityRemote } from '../support/gravity-remote';
import { NetworkStandIns, startNetworkStandIns } from '../support/network-stand-ins';
import { startTestApp, TEST_MASTER_KEY, TestApp, testValidatorHotkey } from '../support/test-app';
import { UPLOADED_VOTE, uploadedParams } from '../support/uploaded-vote';

/**
 * Reading the network's votes: validators' commitments on a chain stand-in (the recorded
 * finney node for netuid 1, on 127.0.0.1, with commitments the test sets) and their files in a
 * Gravity stand-in (a bare git repository reached as file://). Nothing leaves the machine: the
 * recording lists public addresses, the gateway may call loopback only, and every connection
 * this process opens is checked.
 *
 * The tests are one story, in order: each sets commitments that the ones after it count on (the
 * aggregate grows from three validators to four). Run the file, not one of its middle tests.
 */
const NETUID = 1;
const PREFERENCES = (hotkey: string) => `validator_preferences/${hotkey}.json`;
/** A neuron of the recording without a validator permit. */
const NO_PERMIT_HOTKEY = '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ';
/** A neuron of the recording with a validator permit but 5,770 TAO: a miner to subnet 13. */
const LOW_STAKE_UID = 496;
const NOT_A_VALIDATOR =
  'not a validator on the subnet (a validator permit and 10,000 α of stake weight)';
/** A Raw40 commitment that is no SHA. */
const NOT_A_SHA = 'not a sha, but forty characters long....';

const OWNER_LIST = [
  { id: 'owner-tao', weight: 1, params: { platform: 'x', label: '#tao' } },
  { id: 'owner-btc', weight: 1, params: { platform: 'reddit', label: 'r/bitcoin' } },
];
const params = uploadedParams;
/** The aggregate's jobs of the owner (½ each), A (¾ #tao, ¼ #eth) and B (r/bitcoin), by hand. */
const ownerABJobs = (shareA: number, shareB: number) => [
  { id: 'owner-tao', weight: round(0.15 + 0.7 * shareA * 0.75), params: params('x', '#tao') },
  { id: 'owner-btc', weight: round(0.15 + 0.7 * shareB), params: params('reddit', 'r/bitcoin') },
  { id: 'a-eth', weight: round(0.7 * shareA * 0.25), params: params('x', '#eth') },
];
const VOTE_A = [
  { id: 'a-tao', weight: 3, params: params('x', '#tao') },
  { id: 'a-eth', weight: 1, params: params('x', '#eth') },
];
const VOTE_B = [{ source_name: 'reddit', label_weights: { 'r/bitcoin': 1 } }];

interface NetworkStatus {
  source: string;
  computed_at?: string;
  age_seconds?: number;
  validators: {
    hotkey: string;
    stake: number;
    share: number;
    sha: string;
    block: number;
    jobs: number;
    notes?: string[];
  }[];
  skipped: { hotkey: string; reason: string; sha?: string; block?: number }[];
  last_attempt?: { ok: boolean; at: string; error?: string };
}

/**
 * F's jobs on H's label (UPLOADED_VOTE): one with dates of its own, a job apart (the subnet's
 * reader keys jobs on all five params), one with H's dates as H wrote them, merged with H's.
 */
const F_CAFE = {
  ...params('x', '#caf\u00e9'),
  post_start_datetime: '2025-01-01T00:00:00.000Z',
  post_end_datetime: '2025-02-01T00:00:00.000Z',
};
const H_CAFE_AS_WRITTEN = {
  ...params('x', '#caf\u00e9'),
  post_start_datetime: '2025-03-01T00',
  post_end_datetime: '2025-04-01T00:00:00+00:00',
};
const H_CAFE = {
  ...params('x', '#caf\u00e9'),
  post_start_datetime: '2025-03-01T00:00:00.000Z',
  post_end_datetime: '2025-04-01T00:00:00.000Z',
};

describe('The network’s votes and aggregate (chain commitments and the Gravity repository)', () => {
  let standIns: NetworkStandIns;
  let replay: ChainReplay;
  let gravity: GravityRemote;
  let dataDir: string;
  let app: TestApp;
  let connections: ReturnType<typeof recordConnections>;
  let validators: { hotkey: string; stake: number }[];
  let lowStake: { hotkey: string; stake: number; validator_permit: boolean };
  let commitA: string;
  let commitB: string;
  let commitC: string;

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
    standIns = await startNetworkStandIns('netvotes', NETUID);
    ({ replay, remote: gravity, dataDir } = standIns);
    const ownerFile = join(dataDir, 'owner.json');
    writeFileSync(ownerFile, JSON.stringify(OWNER_LIST));
    app = await startTestApp({
      DATABASE_URL: standIns.databaseUrl,
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
    validators = miners.miners.slice(0, 9);
    [lowStake] = (await get(`/api/v1/miners?uid=${LOW_STAKE_UID}`).expect(200)).body.miners;
    const [a, b, , , e, f] = validators.map((validator) => validator.hotkey);

    // First commit: A and B vote. Second: A changes its mind (the branch head moves, its
    // commitment stays on the first), E's file is not JSON, F's first job weighs 0 (counted by
    // the subnet's reader, adding nothing). Third: H's file as uploaded.
    commitA = gravity.commit({
      [PREFERENCES(a)]: JSON.stringify(VOTE_A, null, 4),
      [PREFERENCES(b)]: JSON.stringify(VOTE_B, null, 4),
    });
    commitB = gravity.commit({
      [PREFERENCES(a)]: JSON.stringify([
        { id: 'a-later', weight: 1, params: params('x', '#later') },
      ]),
      [PREFERENCES(e)]: '{"not json',
      [PREFERENCES(f)]: JSON.stringify([
        { id: 'f-zero', weight: 0, params: params('x', '#zero') },
        { id: 'f-cafe', weight: 0.25, params: F_CAFE },
        { id: 'f-cafe-march', weight: 0.25, params: H_CAFE_AS_WRITTEN },
      ]),
    });
    commitC = gravity.commit({
      [PREFERENCES(validators[7].hotkey)]: UPLOADED_VOTE,
      // A NUL byte, which no JSON text holds raw, nor can Postgres store.
      [PREFERENCES(validators[8].hotkey)]: '[{"id": "nul\u0000"}]',
    });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await standIns?.stop();
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
      (candidate) => candidate.validators.length === 3 && candidate.skipped.length === 6,
    );
    const [stakeA, stakeB, stakeF] = [0, 1, 5].map((index) => validators[index].stake);
    const shareA = stakeA / (stakeA + stakeB + stakeF);
    const shareB = stakeB / (stakeA + stakeB + stakeF);
    const shareF = stakeF / (stakeA + stakeB + stakeF);
    expect(status.source).toBe('network');
    expect(status.validators).toEqual(
      [
        { hotkey: a, stake: stakeA, share: round(shareA), sha: commitA, block: 100, jobs: 2 },
        { hotkey: b, stake: stakeB, share: round(shareB), sha: commitA, block: 101, jobs: 1 },
        {
          hotkey: f,
          stake: stakeF,
          share: round(shareF),
          sha: commitB,
          block: 105,
          jobs: 2,
          notes: [
            'entry 0 (id "f-zero"): a weight that is not above 0 adds nothing here (the subnet would subtract a negative one)',
          ],
        },
      ].sort((x, y) => (x.hotkey < y.hotkey ? -1 : 1)),
    );
    const reasons = Object.fromEntries(status.skipped.map((entry) => [entry.hotkey, entry.reason]));
    expect(reasons).toEqual({
      [c]: 'the commitment is not a git SHA (40 hex characters)',
      [d]: `commit ${'f'.repeat(40)} is not in the Gravity repository`,
      [e]: expect.stringMatching(new RegExp(`^${PREFERENCES(e)} at ${commitB} is not valid JSON`)),
      [NO_PERMIT_HOTKEY]: NOT_A_VALIDATOR,
      [g]: 'the commitment is a Sha256, not raw bytes (a git SHA)',
      [lowStake.hotkey]: NOT_A_VALIDATOR,
    });

    // By hand: owner 0.3 × ½ each; A's 0.7 × shareA × (¾ #tao, ¼ #eth); B's 0.7 × shareB ×
    // r/bitcoin.
    const expected = [
      ...ownerABJobs(shareA, shareB),
      { id: 'f-cafe', weight: round(0.7 * shareF * 0.25), params: F_CAFE },
      { id: 'f-cafe-march', weight: round(0.7 * shareF * 0.25), params: H_CAFE },
    ].sort((x, y) => y.weight - x.weight || (x.id < y.id ? -1 : 1));
    const answer = await get('/api/v1/get_desirabilities').expect(200);
    expect(answer.body).toEqual(expected);
    expect(answer.headers['x-aggregate-source']).toBe('network');
    expect(answer.headers['x-total-count']).toBe('5');
    expect(Number(answer.headers.age)).toBeGreaterThanOrEqual(0);
    // Recomputed every second here: the list may come from a computation after `status`'s (the
    // fresh-clone CI met one 340 ms later), never from one before it or one not yet reported.
    const after = await networkStatus();
    const computedAt = Date.parse(answer.headers['x-aggregate-computed-at']);
    expect(computedAt).toBeGreaterThanOrEqual(Date.parse(status.computed_at!));
    expect(computedAt).toBeLessThanOrEqual(Date.parse(after.computed_at!));
  }, 30_000);

  it('reads a file as the subnet’s reader does: the jobs it does not count are left out, not the whole file, weights stay as written, and a job is merged with another validator’s when its five params are the same', async () => {
    const [a, b, , , , f, , h] = validators.map((validator) => validator.hotkey);
    replay.setCommitment(NETUID, h, commitC, 109);
    const status = await eventually((candidate) => candidate.validators.length === 4);
    const stakes = [0, 1, 5, 7].map((index) => validators[index].stake);
    const total = stakes.reduce((sum, stake) => sum + stake, 0);
    const [shareA, shareB, shareF, shareH] = stakes.map((stake) => stake / total);
    expect(status.validators.find((validator) => validator.hotkey === h)).toEqual({
      hotkey: h,
      stake: stakes[3],
      share: round(shareH),
      sha: commitC,
      block: 109,
      jobs: 2,
      notes: [
        'entry 1 (id "yt"): platform "youtube" is not one this gateway serves (x, reddit)',
        'entry 3 (id "upper"): platform "X": the subnet\'s lookup counts "x" and "reddit" only, in lower case',
      ],
    });
    expect(status.validators.map((validator) => validator.hotkey).sort()).toEqual(
      [a, b, f, h].sort(),
    );

    // The file exactly as it is (the youtube job included), as the subnet's lookup answers it.
    const submission = await get(`/api/v1/get_desirabilities?hotkey=${h}`).expect(200);
    expect(submission.body).toEqual(JSON.parse(UPLOADED_VOTE));
    expect(submission.headers['x-commitment-sha']).toBe(commitC);

    // H's two x jobs weigh 0.1 and 0.05 of its share, as written: the rest of its 0.3 goes to
    // jobs this gateway does not count, and its unspent share to nobody. Its #café is one job
    // with F's of the same dates, apart from F's of other dates.
    const expected = [
      ...ownerABJobs(shareA, shareB),
      { id: 'f-cafe', weight: round(0.7 * shareF * 0.25), params: F_CAFE },
      {
        // The larger contribution's id (ties: the smaller id).
        id: shareF * 0.25 > shareH * 0.1 ? 'f-cafe-march' : 'cafe',
        weight: round(0.7 * (shareF * 0.25 + shareH * 0.1)),
        params: H_CAFE,
      },
      {
        id: 'btc',
        weight: round(0.7 * shareH * 0.05),
        params: { ...params('x', 'bitcoin'), keyword: 'etf' },
      },
    ].sort((x, y) => y.weight - x.weight || (x.id < y.id ? -1 : 1));
    expect((await get('/api/v1/get_desirabilities').expect(200)).body).toEqual(expected);
  }, 30_000);

  it('says a file holding a NUL byte is no vote, and goes on reading the others', async () => {
    const nul = validators[8].hotkey;
    replay.setCommitment(NETUID, nul, commitC, 110);
    const status = await eventually((candidate) =>
      candidate.skipped.some((entry) => entry.hotkey === nul),
    );
    expect(status.last_attempt?.ok).toBe(true);
    expect(status.validators).toHaveLength(4);
    expect(status.skipped.find((entry) => entry.hotkey === nul)?.reason).toBe(
      `${PREFERENCES(nul)} at ${commitC} is not valid JSON: it holds a NUL character`,
    );
    const lookup = await get(`/api/v1/get_desirabilities?hotkey=${nul}`).expect(404);
    expect(lookup.body.detail).toMatch(/is no vote: .* it holds a NUL character$/);
  });

  it('answers a counted file with entries the subnet’s reader skips as written, as the document says', async () => {
    const d = validators[3].hotkey;
    // Skipped before their weight is read, so anything may stand there: the file still counts.
    const file = [
      { id: 'd-tao', weight: 0.5, params: params('x', '#tao') },
      { id: 'no-params', weight: 'x' },
      { id: 'no-label', weight: [0.1], params: { platform: 'x', keyword: 7 } },
      { id: 'long', weight: 'x', params: params('x', `#${'a'.repeat(140)}`) },
      { source_name: 5, label_weights: 'x' },
    ];
    const commit = gravity.commit({ [PREFERENCES(d)]: JSON.stringify(file) });
    replay.setCommitment(NETUID, d, commit, 111);
    try {
      const status = await eventually((candidate) =>
        candidate.validators.some((v) => v.hotkey === d),
      );
      expect(status.validators.find((validator) => validator.hotkey === d)?.jobs).toBe(1);
      // Checked against the served document, as every answer of these tests is: GravityJob's
      // typed weight and params did not fit these entries.
      const answer = await get(`/api/v1/get_desirabilities?hotkey=${d}`).expect(200);
      expect(answer.body).toEqual(file);
    } finally {
      // D's vote goes again (no file at commit A), for the tests after this one.
      replay.setCommitment(NETUID, d, commitA, 112);
      await eventually((candidate) => candidate.skipped.some((entry) => entry.hotkey === d));
    }
  }, 30_000);

  it('answers a validator’s submission at its committed SHA, not at the branch head', async () => {
    const [a] = validators.map((validator) => validator.hotkey);
    expect(gravity.head()).not.toBe(commitA);
    const answer = await get(`/api/v1/get_desirabilities?hotkey=${a}`).expect(200);
    expect(answer.body).toEqual(VOTE_A);
    expect(answer.headers['x-commitment-sha']).toBe(commitA);
    expect(answer.headers['x-commitment-block']).toBe('100');
    expect(answer.headers['x-vote-published']).toBeUndefined();
  });

  // The chain reads a key under any SS58 prefix; the file is named by its prefix-42 address,
  // and looked up under the input it was a 404 cached for good (an audit's finding).
  it('answers a validator’s submission for its key under another SS58 prefix', async () => {
    const publicKey = decodeAddress(validators[0].hotkey);
    for (const hotkey of [encodeAddress(publicKey, 0), encodeAddress(publicKey, 2)]) {
      const answer = await get(`/api/v1/get_desirabilities?hotkey=${hotkey}`).expect(200);
      expect(answer.body).toEqual(VOTE_A);
      expect(answer.headers['x-commitment-sha']).toBe(commitA);
    }
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
    // No address: refused before the node is asked (it refused it itself, a 500, before 404s).
    const unknown = await get('/api/v1/get_desirabilities?hotkey=abc').expect(422);
    expect(unknown.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'hotkey'], type: 'value_error' }),
    ]);
  });

  it('says whether our own latest vote is the one published', async () => {
    const own = testValidatorHotkey();
    const vote = [{ id: 'own-tao', weight: 2, params: params('x', '#tao') }];
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
          { id: 'own-eth', weight: 1, params: params('x', '#eth') },
        ],
      })
      .expect(200);
    const newer = await get(`/api/v1/get_desirabilities?hotkey=${own}`).expect(200);
    expect(newer.headers['x-vote-published']).toBe('false');
  });

  it('serves the last good aggregate, with its age, while the chain is out of reach', async () => {
    const lastGood = await eventually((candidate) => candidate.last_attempt?.ok === true);
    await replay.stop();
    const status = await eventually((candidate) => candidate.last_attempt?.ok === false);
    expect(status.last_attempt?.error).toEqual(expect.any(String));
    // Runs take turns, so every one from here fails: what is served stays the last good run's
    // (compared, not counted, so that this test also holds when run alone).
    expect(status.validators).toEqual(lastGood.validators);
    const before = await get('/api/v1/get_desirabilities').expect(200);
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
