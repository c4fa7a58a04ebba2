import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublicationWorker } from '../../src/modules/publication/publication-worker.service';
import { ChainReplay, startChainReplay } from '../support/chain-replay';
import { createKey } from '../support/fixtures';
import { createGravityRemote, GravityRemote } from '../support/gravity-remote';
import { publicationEnvironment } from '../support/network-stand-ins';
import { startTestApp, TestApp, testValidatorHotkey } from '../support/test-app';
import { startThrowawayPostgres, ThrowawayPostgres } from '../support/throwaway-servers';

/**
 * Vote publication across a Postgres outage that strikes between the push and its record: the
 * attempt cannot even be recorded as failed, so the claim lapses, and the next attempt finds
 * the file already in the repository: it commits that commit, without a second push.
 */
describe('Publishing the vote across a Postgres outage', () => {
  const hotkey = testValidatorHotkey();
  let postgres: ThrowawayPostgres;
  let replay: ChainReplay;
  let remote: GravityRemote;
  let dataDir: string;
  let app: TestApp;

  beforeAll(async () => {
    postgres = await startThrowawayPostgres();
    replay = await startChainReplay();
    remote = createGravityRemote();
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-publish-outage-'));
    app = await startTestApp({
      DATABASE_URL: postgres.url,
      ...publicationEnvironment({
        subtensorUrl: replay.url,
        gravityUrl: remote.url,
        dataDir,
        netuid: 1,
      }),
      PUBLICATION_RETRY_MS: '100',
      PUBLICATION_LEASE_MS: '1000',
    });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await replay?.stop();
    await postgres?.destroy();
    remote?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('publishes once Postgres is back, without pushing twice', async () => {
    const { key } = await createKey(app, { tier: 'validator' });
    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', key)
      .send({
        desirabilities: [{ id: 'outage-tao', weight: 1, params: { platform: 'x', label: '#tao' } }],
      })
      .expect(200);

    const worker = app.app.get(PublicationWorker);
    worker.gravity!.beforePush = () => postgres.stop();
    // The push lands; recording it fails, and so does recording the failure: no throw here.
    await worker.runOnce();
    worker.gravity!.beforePush = undefined;
    expect(remote.commitsOf(hotkey)).toHaveLength(1);
    const pushed = remote.head();

    await postgres.start();
    // Past the lease of the claim nobody could release.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await worker.runOnce();
    const status = await app.http
      .get('/api/v1/desirabilities/publication')
      .set('X-API-Key', key)
      .expect(200);
    expect(status.body).toMatchObject({ state: 'committed', commit_sha: pushed });
    expect(remote.commitsOf(hotkey)).toHaveLength(1);
    expect(replay.extrinsics.submitted).toHaveLength(1);
  });
});
