import { PublicationWorker } from '../../src/modules/publication/publication-worker.service';
import { createKey } from '../support/fixtures';
import { NetworkStandIns, startNetworkStandIns } from '../support/network-stand-ins';
import { startTestApp, TestApp, testValidatorHotkey } from '../support/test-app';

/**
 * An operator corrects GRAVITY_REPO_URL and restarts: the failures of the repository the vote
 * could not be pushed to are not the new one's. The publication starts afresh (due now, no
 * attempts, no error) for the new target, and a restart with the target unchanged keeps the
 * backoff (docs/decisions.md, "Publishing the vote to the network").
 */
const NETUID = 1;
const HOUR_MS = 3_600_000;

interface PublicationStatus {
  state: string;
  repository?: string;
  commit_sha?: string;
  last_error?: string;
  next_attempt_at?: string;
  attempts: number;
}

describe('Publishing the vote after GRAVITY_REPO_URL changed', () => {
  const hotkey = testValidatorHotkey();
  let standIns: NetworkStandIns;
  let app: TestApp | undefined;
  let wrongUrl: string;

  /** A replica publishing to `gravityUrl` (the stand-in's repository unless given). */
  const start = (gravityUrl?: string) =>
    startTestApp({
      ...standIns.environment(),
      ...(gravityUrl ? { GRAVITY_REPO_URL: gravityUrl } : {}),
      // A failure is retried an hour later, as PUBLICATION_RETRY_MAX_MS lets it grow to.
      PUBLICATION_RETRY_MS: String(HOUR_MS),
      PUBLICATION_RETRY_MAX_MS: String(HOUR_MS),
    });
  const restart = async (gravityUrl?: string) => {
    await app?.close();
    app = undefined;
    app = await start(gravityUrl);
    return app;
  };
  const publication = async (which: TestApp) => {
    const { key } = await createKey(which, { tier: 'validator' });
    return (
      await which.http.get('/api/v1/desirabilities/publication').set('X-API-Key', key).expect(200)
    ).body as PublicationStatus;
  };

  beforeAll(async () => {
    standIns = await startNetworkStandIns('pubtarget', NETUID);
    // A mistyped path beside the real repository: nothing there to push to.
    wrongUrl = standIns.remote.url.replace(/gravity\.git$/, 'gravity-typo.git');
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await standIns?.stop();
  }, 60_000);

  it('starts the publication afresh for the corrected repository, and keeps the wait otherwise', async () => {
    const first = await restart(wrongUrl);
    const { key } = await createKey(first, { tier: 'validator' });
    await first.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', key)
      .send({
        desirabilities: [{ id: 'target-tao', weight: 1, params: { platform: 'x', label: '#tao' } }],
      })
      .expect(200);
    await first.app.get(PublicationWorker).runOnce();
    const failed = await publication(first);
    expect(failed).toMatchObject({
      state: 'failed',
      repository: `${wrongUrl}#main`,
      attempts: 1,
      last_error: expect.stringMatching(/^push failed: /) as string,
    });
    expect(Date.parse(failed.next_attempt_at!)).toBeGreaterThan(Date.now() + HOUR_MS / 2);

    // The same target: the failure and its wait stand.
    const again = await restart(wrongUrl);
    expect(await publication(again)).toEqual(failed);

    const corrected = await restart();
    const restarted = await publication(corrected);
    expect(restarted).toMatchObject({
      state: 'pending',
      repository: `${standIns.remote.url}#main`,
      attempts: 0,
    });
    expect(restarted.last_error).toBeUndefined();
    expect(Date.parse(restarted.next_attempt_at!)).toBeLessThanOrEqual(Date.now());

    await corrected.app.get(PublicationWorker).runOnce();
    const committed = await publication(corrected);
    expect(committed).toMatchObject({ state: 'committed', attempts: 0 });
    expect(standIns.remote.commitsOf(hotkey)).toEqual([committed.commit_sha]);
  }, 180_000);
});
