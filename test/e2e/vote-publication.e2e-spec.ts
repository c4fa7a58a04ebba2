import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hexToU8a, u8aToString } from '@polkadot/util';
import { Clock } from '../../src/common/clock/clock';
import { PublicationWorker } from '../../src/modules/publication/publication-worker.service';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { isLocal, recordConnections } from '../support/connections';
import { createKey } from '../support/fixtures';
import { eventually, scrape } from '../support/metrics';
import { sample } from '../support/prometheus-text';
import { NetworkStandIns, startNetworkStandIns } from '../support/network-stand-ins';
import { startTestApp, TEST_MASTER_KEY, TestApp, testValidatorHotkey } from '../support/test-app';

/**
 * Publishing this validator's vote to the network against stand-ins on loopback: the Gravity
 * repository is a bare git repository reached over file://, into which another validator has
 * pushed already; the chain is the recorded finney runtime (chain-replay.ts), which takes
 * signed extrinsics, checks their signature and includes them in blocks of its own.
 */
const NETUID = 1;
const OTHER_VALIDATOR = '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ';
const LATE_VALIDATOR = '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';
const DAY = 86_400_000;
const OTHER_FILE = JSON.stringify([{ id: 'other', weight: 1, params: { platform: 'x' } }]);

interface PublicationStatus {
  state: string;
  hotkey: string;
  commit_sha?: string;
  block_number?: number;
  block_hash?: string;
  last_error?: string;
  next_attempt_at?: string;
  claimed_until?: string;
  message: string;
  attempts: number;
}

/**
 * A vote, and the file the subnet's uploader writes for it (dynamic_desirability/data.py:
 * `json.dumps` of its models, indent 4): normalized, `JobParams`' fields in their order, weights
 * as Python floats, non-ASCII escaped, dates as `datetime.isoformat()` writes them (every
 * Python's `fromisoformat` reads them; 3.10 refuses a `Z`).
 */
function vote(suffix: string) {
  const body = {
    desirabilities: [
      { id: `tao-${suffix}`, weight: 3, params: { platform: 'x', label: '#TAO' } },
      {
        id: `btc-${suffix}`,
        weight: 1,
        params: {
          platform: 'Reddit',
          label: '/r/Bitcoin',
          keyword: ' caf\u00e9 halving ',
          post_start_datetime: '2026-01-01T00:00:00Z',
          post_end_datetime: '2026-02-01T12:30:00.250+02:00',
        },
      },
    ],
  };
  const file = [
    '[',
    '    {',
    `        "id": "tao-${suffix}",`,
    '        "weight": 0.75,',
    '        "params": {',
    '            "keyword": null,',
    '            "platform": "x",',
    '            "label": "#tao",',
    '            "post_start_datetime": null,',
    '            "post_end_datetime": null',
    '        }',
    '    },',
    '    {',
    `        "id": "btc-${suffix}",`,
    '        "weight": 0.25,',
    '        "params": {',
    '            "keyword": "caf\\u00e9 halving",',
    '            "platform": "reddit",',
    '            "label": "r/bitcoin",',
    '            "post_start_datetime": "2026-01-01T00:00:00+00:00",',
    '            "post_end_datetime": "2026-02-01T10:30:00.250000+00:00"',
    '        }',
    '    }',
    ']',
  ].join('\n');
  return { body, file };
}

describe('Publishing the vote to the network', () => {
  const hotkey = testValidatorHotkey();
  let standIns: NetworkStandIns;
  let app: TestApp;
  let validatorKey: string;
  let connections: ReturnType<typeof recordConnections>;

  const environment = (directory?: string) => ({
    ...standIns.environment(directory),
    // A retry is due 2–2.5 s after a failure: long enough that a check made right after it
    // still finds it not due on a loaded machine (at 0.1 s it sometimes was, and 0.8–1 s is
    // within one of CI's stalls), short enough for afterRetryDelay.
    PUBLICATION_RETRY_MS: '2000',
    PUBLICATION_RETRY_MAX_MS: '2500',
    PUBLICATION_LEASE_MS: '1000',
    // Room for a vote whose file is too large for the network (the largest-vote test below).
    DESIRABILITY_MAX_JOBS: '10000',
    DESIRABILITY_MAX_ACTIVE_TASKS: '20000',
    BODY_LIMIT: '20mb',
  });
  const worker = (which = app) => which.app.get(PublicationWorker);
  const submit = (body: object, which = app) =>
    which.http.post('/api/v1/set_desirabilities').set('X-API-Key', validatorKey).send(body);
  const publication = async (which = app) =>
    (
      await which.http
        .get('/api/v1/desirabilities/publication')
        .set('X-API-Key', validatorKey)
        .expect(200)
    ).body as PublicationStatus;
  const ourCommits = () => standIns.remote.commitsOf(hotkey);
  const raw40 = (index: number) => {
    const args = standIns.replay.extrinsics.submitted[index].args as {
      info: { fields: Record<string, string>[] };
    };
    return u8aToString(hexToU8a(args.info.fields[0].raw40));
  };
  /** Past PUBLICATION_RETRY_MAX_MS, and past the dead replica's claim below. */
  const afterRetryDelay = () => new Promise((resolve) => setTimeout(resolve, 3000));

  beforeAll(async () => {
    connections = recordConnections();
    standIns = await startNetworkStandIns('publish', NETUID);
    standIns.remote.pushAs(OTHER_VALIDATOR, OTHER_FILE);
    app = await startTestApp(environment());
    validatorKey = (await createKey(app, { tier: 'validator' })).key;
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await standIns?.stop();
    connections.stop();
  });
  beforeEach(() => {
    worker().gravity!.beforePush = undefined;
  });

  it('pushes the normalized vote on top of a commit pushed meanwhile, and commits its SHA on chain', async () => {
    expect(await publication()).toMatchObject({ state: 'none', hotkey, attempts: 0 });
    const { body, file } = vote('a');
    const submitted = await submit(body).expect(200);
    expect(submitted.body).toMatchObject({ publication: 'pending', tasks: ['tao-a', 'btc-a'] });
    expect(submitted.body.message).toContain('publication to the network pending');
    expect(await publication()).toMatchObject({ state: 'pending', hotkey, attempts: 0 });

    // Another validator pushes between our fetch and our push: ours is refused, then redone.
    let someoneElse: string | undefined;
    worker().gravity!.beforePush = async () => {
      someoneElse ??= standIns.remote.pushAs(LATE_VALIDATOR, OTHER_FILE);
    };
    await worker().runOnce();

    const status = await publication();
    expect(status).toMatchObject({ state: 'committed', attempts: 0 });
    // Done: no attempt is due, so none is announced.
    expect(status.next_attempt_at).toBeUndefined();
    const sha = status.commit_sha!;
    expect(standIns.remote.head()).toBe(sha);
    expect(standIns.remote.parents(sha)).toEqual([someoneElse]);
    expect(standIns.remote.message(sha)).toBe(`Add ${hotkey} preferences JSON file`);
    expect(standIns.remote.fileAt(sha, hotkey)).toBe(file);
    expect(standIns.remote.fileAt(sha, OTHER_VALIDATOR)).toBe(OTHER_FILE);
    expect(standIns.remote.fileAt(sha, LATE_VALIDATOR)).toBe(OTHER_FILE);

    // commitments.setCommitment(netuid, Raw40(sha)), signed by the hotkey, signature checked.
    expect(standIns.replay.extrinsics.submitted).toHaveLength(1);
    const [extrinsic] = standIns.replay.extrinsics.submitted;
    expect(extrinsic).toMatchObject({
      signer: hotkey,
      call: 'commitments.setCommitment',
      signatureValid: true,
      outcome: 'success',
    });
    expect(extrinsic.args.netuid).toBe(NETUID);
    expect(raw40(0)).toBe(sha);
    expect(status.block_number).toBe(extrinsic.blockNumber);
    expect(status.block_hash).toBe(extrinsic.blockHash);

    // Read back through the reading half: our CommitmentOf names the SHA, the file there is the
    // vote, and it is our latest one.
    const onNetwork = await app.http
      .get(`/api/v1/get_desirabilities?hotkey=${hotkey}`)
      .set('X-API-Key', validatorKey)
      .expect(200);
    expect(onNetwork.headers['x-commitment-sha']).toBe(sha);
    expect(onNetwork.headers['x-commitment-block']).toBe(String(extrinsic.blockNumber));
    expect(onNetwork.headers['x-vote-published']).toBe('true');
    expect(onNetwork.body).toEqual(JSON.parse(file));

    // Each task records the block that registered it on the network.
    for (const id of ['tao-a', 'btc-a']) {
      const task = await app.http
        .get(`/api/v1/tasks/${id}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
      expect(task.body.network_registration).toEqual({
        block: extrinsic.blockNumber,
        registered_at: expect.any(String),
        commit_sha: sha,
      });
    }
  });

  it('shows the state in system-status and metrics', async () => {
    const status = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(status.body.components.publication).toMatchObject({
      status: 'healthy',
      state: 'committed',
      commit_sha: standIns.remote.head(),
      block_number: standIns.replay.extrinsics.submitted[0].blockNumber,
    });
    const metrics = await scrape(app);
    expect(sample(metrics, 'gateway_desirability_publication', { state: 'committed' })).toBe(1);
    expect(sample(metrics, 'gateway_desirability_publication', { state: 'pending' })).toBe(0);
    expect(
      sample(metrics, 'gateway_desirability_publication_attempts_total', { step: 'push' }),
    ).toBe(1);
    expect(
      sample(metrics, 'gateway_desirability_publication_attempts_total', { step: 'commit' }),
    ).toBe(1);
  });

  // Our commitment's file is the vote already: a commitment of the branch's head, which holds
  // the same file under another SHA once another validator pushed, paid a fee and a commitment's
  // space for nothing (an audit's finding).
  it('commits nothing again for an identical vote sent again', async () => {
    const before = ourCommits();
    const committed = await publication();
    const extrinsics = standIns.replay.extrinsics.submitted.length;
    await submit(vote('a').body).expect(200);
    standIns.remote.pushAs(LATE_VALIDATOR, '[]');
    await worker().runOnce();
    expect(await publication()).toMatchObject({
      state: 'committed',
      commit_sha: committed.commit_sha,
      block_number: committed.block_number,
    });
    expect(ourCommits()).toEqual(before);
    expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics);
  });

  it('commits the remote head without an empty commit when the file is unchanged', async () => {
    // Our file as the vote publishes it, pushed by another hand (a replica whose commitment
    // failed).
    const head = standIns.remote.pushAs(hotkey, vote('a2').file);
    const before = ourCommits();
    await submit(vote('a2').body).expect(200);
    await worker().runOnce();
    const status = await publication();
    expect(status).toMatchObject({ state: 'committed', commit_sha: head });
    expect(ourCommits()).toEqual(before);
    expect(raw40(standIns.replay.extrinsics.submitted.length - 1)).toBe(head);
  });

  it('publishes only the last of three quick votes', async () => {
    const pushes = ourCommits().length;
    const extrinsics = standIns.replay.extrinsics.submitted.length;
    for (const suffix of ['b1', 'b2', 'b3']) await submit(vote(suffix).body).expect(200);
    await worker().runOnce();
    const status = await publication();
    expect(status.state).toBe('committed');
    expect(ourCommits()).toHaveLength(pushes + 1);
    expect(standIns.remote.fileAt(status.commit_sha!, hotkey)).toBe(vote('b3').file);
    expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics + 1);
    expect(raw40(extrinsics)).toBe(status.commit_sha);
  });

  // Within DESIRABILITY_MAX_JOBS and BODY_LIMIT, but its file, every character escaped as the
  // subnet's uploader writes it (12 bytes an emoji), is over the 32 MiB a vote's file may be:
  // published, this gateway's readers (ours and every other's) would take it for no vote.
  it('refuses a vote whose published file would be too large for the network, storing and publishing nothing', async () => {
    await submit(vote('size-ok').body).expect(200);
    await worker().runOnce();
    const before = await publication();
    expect(before.state).toBe('committed');
    const pushes = ourCommits().length;
    const emoji = '\u{1F600}';
    const desirabilities = Array.from({ length: 9000 }, (_, index) => ({
      id: `${index}${emoji.repeat(70)}`,
      weight: 1,
      params: {
        platform: 'x',
        label: `#${index}${emoji.repeat(130)}`,
        keyword: emoji.repeat(140),
      },
    }));
    const refused = await submit({ desirabilities }).expect(422);
    expect(refused.body).toMatchObject({
      detail: [
        {
          loc: ['body', 'desirabilities'],
          msg: expect.stringMatching(
            /^Value error, the vote's file for the Gravity repository would be \d+ bytes, more than the 33554432 /,
          ) as string,
          type: 'value_error',
        },
      ],
    });
    await worker().runOnce();
    expect(await publication()).toEqual(before);
    expect(ourCommits()).toHaveLength(pushes);
    expect(standIns.remote.fileAt(before.commit_sha!, hotkey)).toBe(vote('size-ok').file);
  }, 120_000);

  // The subnet's reader of the repository fails on a job without a label and then ignores every
  // vote (docs/decisions.md, "Keyword-only jobs are not published").
  it('leaves keyword-only jobs out of the published file, keeps them stored and says so', async () => {
    const { body } = vote('c');
    const keywordOnly = {
      id: 'halving-c',
      weight: 4,
      params: { platform: 'x', keyword: 'halving' },
    };
    const submitted = await submit({
      desirabilities: [...body.desirabilities, keywordOnly],
    }).expect(200);
    expect(submitted.body).toMatchObject({
      tasks: ['tao-c', 'btc-c', 'halving-c'],
      publication: 'pending',
      not_published: ['halving-c'],
    });
    expect(submitted.body.message).toContain('not published');
    expect(submitted.body.message).toContain('halving-c');

    await worker().runOnce();
    const status = await publication();
    expect(status.state).toBe('committed');
    const file = JSON.parse(standIns.remote.fileAt(status.commit_sha!, hotkey)!) as {
      id: string;
      weight: number;
      params: { label: string | null };
    }[];
    expect(file.map((job) => job.id)).toEqual(['tao-c', 'btc-c']);
    expect(file.every((job) => job.params.label !== null)).toBe(true);
    expect(file.map((job) => job.weight)).toEqual([3 / 8, 1 / 8]);

    const task = (id: string) =>
      app.http.get(`/api/v1/tasks/${id}`).set('X-API-Key', TEST_MASTER_KEY).expect(200);
    expect((await task('halving-c')).body.network_registration).toBeUndefined();
    expect((await task('tao-c')).body.network_registration).toMatchObject({
      commit_sha: status.commit_sha,
    });
    const stored = await app.http
      .get(`/api/v1/get_desirabilities?hotkey=${hotkey}`)
      .set('X-API-Key', validatorKey)
      .expect(200);
    expect(stored.headers['x-vote-published']).toBe('true');
  });

  it('waits and retries when the chain answers with its commitment rate limit', async () => {
    const pushes = ourCommits().length;
    const extrinsics = standIns.replay.extrinsics.submitted.length;
    standIns.replay.extrinsics.failNext(2);
    await submit(vote('c').body).expect(200);

    await worker().runOnce();
    const waiting = await publication();
    expect(waiting).toMatchObject({ state: 'pushed', attempts: 1 });
    expect(waiting.last_error).toMatch(/rate limited by the chain: commitments\.\w+/);
    expect(Date.parse(waiting.next_attempt_at!)).toBeGreaterThan(Date.now() - 1000);
    // Not due yet: nothing happens.
    await worker().runOnce();
    expect((await publication()).attempts).toBe(1);

    await afterRetryDelay();
    await worker().runOnce();
    expect(await publication()).toMatchObject({ state: 'pushed', attempts: 2 });
    await afterRetryDelay();
    await worker().runOnce();
    const status = await publication();
    expect(status).toMatchObject({ state: 'committed', attempts: 0 });

    // One push; three submissions of the same SHA, the first two refused.
    expect(ourCommits()).toHaveLength(pushes + 1);
    const outcomes = standIns.replay.extrinsics.submitted
      .slice(extrinsics)
      .map((ext) => ext.outcome);
    expect(outcomes).toHaveLength(3);
    expect(outcomes[2]).toBe('success');
    expect(outcomes.slice(0, 2).every((outcome) => outcome !== 'success')).toBe(true);
    for (let index = extrinsics; index < extrinsics + 3; index += 1)
      expect(raw40(index)).toBe(status.commit_sha);
    const metrics = await scrape(app);
    expect(
      sample(metrics, 'gateway_desirability_publication_failures_total', {
        step: 'commit',
        reason: 'rate_limited',
      }),
    ).toBe(2);
  });

  // A history rewritten on the Gravity repository (a force push) drops commits our clone keeps:
  // the chain would name, or go on naming, a commit that a reader cloning afresh cannot check
  // out, and the network would not count the vote (an audit's finding).
  describe('when the remote history is rewritten', () => {
    const lastExtrinsic = () => standIns.replay.extrinsics.submitted.length - 1;

    it('pushes the vote again before committing a pushed commit the branch no longer has', async () => {
      const before = standIns.remote.head();
      standIns.replay.extrinsics.failNext(1, 'AccountNotAllowedCommit');
      await submit(vote('k').body).expect(200);
      await worker().runOnce();
      const failed = await publication();
      expect(failed).toMatchObject({ state: 'failed', commit_sha: expect.any(String) });

      // Rewound, then another validator pushes: a commit rebuilt on the same parent within the
      // same second would be the very commit dropped (git dates commits to the second).
      standIns.remote.rewind(before);
      const head = standIns.remote.pushAs(LATE_VALIDATOR, OTHER_FILE);
      await afterRetryDelay();
      await worker().runOnce();
      const done = await publication();
      expect(done.state).toBe('committed');
      expect(done.commit_sha).not.toBe(failed.commit_sha);
      expect(standIns.remote.parents(done.commit_sha!)).toEqual([head]);
      expect(raw40(lastExtrinsic())).toBe(done.commit_sha);
    });

    it('publishes a committed vote again once the branch no longer has its commit', async () => {
      await submit(vote('l').body).expect(200);
      await worker().runOnce();
      const committed = await publication();
      expect(committed.state).toBe('committed');
      const extrinsics = standIns.replay.extrinsics.submitted.length;
      await worker().checkCommitted();
      expect(await publication()).toEqual(committed);

      const [before] = standIns.remote.parents(committed.commit_sha!);
      standIns.remote.rewind(before);
      const head = standIns.remote.pushAs(LATE_VALIDATOR, OTHER_FILE);
      await worker().checkCommitted();
      const again = await publication();
      expect(again).toMatchObject({ state: 'pending', attempts: 0 });
      expect(again.last_error).toBe(
        `commit ${committed.commit_sha}, committed on chain in block ${committed.block_number}, is no longer on the Gravity repository's branch (its history was rewritten): the vote is pushed and committed again`,
      );

      const task = async () =>
        (await app.http.get('/api/v1/tasks/tao-l').set('X-API-Key', validatorKey).expect(200))
          .body as { network_registration?: { commit_sha: string; block: number } };
      // Its tasks no longer name the commit gone, and the new commitment registers them again.
      expect(await task()).not.toHaveProperty('network_registration');

      await worker().runOnce();
      const done = await publication();
      expect(done.state).toBe('committed');
      expect(done.commit_sha).not.toBe(committed.commit_sha);
      expect(standIns.remote.parents(done.commit_sha!)).toEqual([head]);
      expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics + 1);
      expect(raw40(extrinsics)).toBe(done.commit_sha);
      expect((await task()).network_registration).toMatchObject({
        commit_sha: done.commit_sha,
        block: done.block_number,
      });
    });
  });

  describe('across replicas and restarts', () => {
    let second: TestApp | undefined;
    let secondDir: string;

    beforeEach(() => {
      secondDir = mkdtempSync(join(tmpdir(), 'gateway-publish-second-'));
    });
    afterEach(async () => {
      await second?.close();
      second = undefined;
      standIns.replay.extrinsics.holdSubmissions = false;
      standIns.replay.extrinsics.silentInclusions = false;
      rmSync(secondDir, { recursive: true, force: true });
    });

    it('publishes once when two replicas try at the same time', async () => {
      second = await startTestApp(environment(secondDir));
      const pushes = ourCommits().length;
      const extrinsics = standIns.replay.extrinsics.submitted.length;
      await submit(vote('d').body).expect(200);
      await Promise.all([worker().runOnce(), worker(second).runOnce()]);
      expect((await publication(second)).state).toBe('committed');
      expect(ourCommits()).toHaveLength(pushes + 1);
      expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics + 1);
    });

    it("takes over a dead replica's claim once its lease ran out", async () => {
      await submit(vote('e').body).expect(200);
      await standIns.database.query(
        `UPDATE desirability_publications
         SET claimed_by = 'a replica that died', claimed_until = now() + interval '2 seconds'`,
      );
      await worker().runOnce();
      // The claim says why a due vote does not move (an audit's finding: nothing did).
      const held = await publication();
      expect(held).toMatchObject({ state: 'pending', claimed_until: expect.any(String) });
      expect(held.message).toMatch(/; an attempt is under way: a replica holds the vote until /);
      await afterRetryDelay();
      await worker().runOnce();
      const done = await publication();
      expect(done.state).toBe('committed');
      expect(done).not.toHaveProperty('claimed_until');
    });

    it('finishes a publication interrupted between push and commit once, without pushing again', async () => {
      const pushes = ourCommits().length;
      const extrinsics = standIns.replay.extrinsics.submitted.length;
      // The node takes the commitment and never answers: the process is stopped meanwhile.
      standIns.replay.extrinsics.holdSubmissions = true;
      await submit(vote('f').body).expect(200);
      const running = worker().runOnce();
      await eventually(async () => expect((await publication()).state).toBe('pushed'));
      const pushed = (await publication()).commit_sha;
      expect(ourCommits()).toHaveLength(pushes + 1);
      await app.close();
      await running;

      standIns.replay.extrinsics.holdSubmissions = false;
      app = await startTestApp(environment());
      const resumed = await publication();
      expect(resumed).toMatchObject({ state: 'failed', commit_sha: pushed });
      await afterRetryDelay();
      await worker().runOnce();
      expect(await publication()).toMatchObject({ state: 'committed', commit_sha: pushed });
      expect(ourCommits()).toHaveLength(pushes + 1);
      expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics + 1);
      expect(raw40(extrinsics)).toBe(pushed);
    });

    it('records a commitment the chain took before a restart, without submitting it again', async () => {
      const extrinsics = standIns.replay.extrinsics.submitted.length;
      // The node includes the commitment; the process stops before it hears of the block.
      standIns.replay.extrinsics.silentInclusions = true;
      await submit(vote('g').body).expect(200);
      const running = worker().runOnce();
      await eventually(async () =>
        expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics + 1),
      );
      await app.close();
      await running;

      standIns.replay.extrinsics.silentInclusions = false;
      app = await startTestApp(environment());
      const resumed = await publication();
      expect(resumed.state).toBe('failed');
      await afterRetryDelay();
      await worker().runOnce();
      const included = standIns.replay.extrinsics.submitted[extrinsics];
      expect(await publication()).toMatchObject({
        state: 'committed',
        commit_sha: resumed.commit_sha,
        block_number: included.blockNumber,
      });
      expect(raw40(extrinsics)).toBe(resumed.commit_sha);
      expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics + 1);
    });
  });

  // Publication disabled queues nothing: the first start with it enabled queues the vote stored
  // meanwhile, which was otherwise never published until the client voted again (an audit's
  // finding). Here the row still held the vote committed before.
  it('publishes at start a vote stored while publication was disabled', async () => {
    await app.close();
    const withoutGravity: Record<string, string> = environment();
    delete withoutGravity.GRAVITY_REPO_URL;
    app = await startTestApp(withoutGravity);
    const { body, file } = vote('h');
    expect((await submit(body).expect(200)).body).toMatchObject({ publication: 'disabled' });
    await app.close();

    app = await startTestApp(environment());
    expect(await publication()).toMatchObject({ state: 'pending', attempts: 0 });
    await worker().runOnce();
    const status = await publication();
    expect(status).toMatchObject({ state: 'committed' });
    expect(standIns.remote.fileAt(status.commit_sha!, hotkey)).toBe(file);
  });

  /** The ids and weights of our file at the SHA we committed. */
  const publishedJobs = (sha: string) =>
    (JSON.parse(standIns.remote.fileAt(sha, hotkey)!) as { id: string; weight: number }[]).map(
      (job) => [job.id, job.weight],
    );

  // A task ends after seven days, and the local aggregate stops weighing it. The published file
  // kept its job all the same, and the subnet's readers went on weighing it by our stake (an
  // audit's finding): only the vote's active tasks are published.
  it('leaves a task that ended out of a vote stored while publication was disabled', async () => {
    await app.close();
    const withoutGravity: Record<string, string> = environment();
    delete withoutGravity.GRAVITY_REPO_URL;
    app = await startTestApp(withoutGravity);
    await submit(vote('j').body).expect(200);
    await app.close();
    // tao-j's seven days end while the gateway is stopped.
    await standIns.database.query(
      `UPDATE scraping_tasks SET expires_at = now() - interval '1 minute' WHERE id = 'tao-j'`,
    );

    app = await startTestApp(environment());
    expect(await publication()).toMatchObject({ state: 'pending' });
    await worker().runOnce();
    const status = await publication();
    expect(status.state).toBe('committed');
    expect(publishedJobs(status.commit_sha!)).toEqual([['btc-j', 0.25]]);
  });

  it('publishes the vote again without a job once its task ended', async () => {
    const clock = app.app.get(Clock);
    const lifecycle = app.app.get(TaskLifecycleService);
    const { body, file } = vote('i');
    const [tao, btc] = body.desirabilities;
    await submit({ desirabilities: [tao] }).expect(200);
    await worker().runOnce();
    clock.advance(4 * DAY);
    // tao-i keeps its task (and its end), btc-i is registered four days later.
    await submit({ desirabilities: [tao, btc] }).expect(200);
    await worker().runOnce();
    const both = await publication();
    expect(standIns.remote.fileAt(both.commit_sha!, hotkey)).toBe(file);

    clock.advance(4 * DAY);
    await lifecycle.runOnce();
    await worker().runOnce();
    const status = await publication();
    expect(status.state).toBe('committed');
    // The stored weight: the file's weights then sum to less than 1, as the subnet allows.
    expect(publishedJobs(status.commit_sha!)).toEqual([['btc-i', 0.25]]);
    const onNetwork = await app.http
      .get(`/api/v1/get_desirabilities?hotkey=${hotkey}`)
      .set('X-API-Key', validatorKey)
      .expect(200);
    expect(onNetwork.headers['x-commitment-sha']).toBe(status.commit_sha);
    expect(onNetwork.headers['x-vote-published']).toBe('true');

    // Nothing more ended: nothing more is published.
    const extrinsics = standIns.replay.extrinsics.submitted.length;
    await lifecycle.runOnce();
    await worker().runOnce();
    expect(await publication()).toEqual(status);
    expect(standIns.replay.extrinsics.submitted).toHaveLength(extrinsics);

    // Every task of the vote ended: the network counts no vote of ours.
    clock.advance(4 * DAY);
    await lifecycle.runOnce();
    await worker().runOnce();
    const ended = await publication();
    expect(ended.state).toBe('committed');
    expect(standIns.remote.fileAt(ended.commit_sha!, hotkey)).toBe('[]');
  });

  it('never connects anywhere but loopback', () => {
    expect(connections.destinations.length).toBeGreaterThan(0);
    expect(connections.destinations.filter((destination) => !isLocal(destination))).toEqual([]);
  });
});
