import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublicationWorker } from '../../src/modules/publication/publication-worker.service';
import { ChainReplay, startChainReplay } from '../support/chain-replay';
import { createKey } from '../support/fixtures';
import { publicationEnvironment } from '../support/network-stand-ins';
import { startTestApp, TestApp } from '../support/test-app';
import { processesLeft, runningProcesses } from '../support/processes';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Shutdown while the publication's git fetch waits on a remote that never answers (the fetch
 * gives up after 120 s, and compose kills the container after 30): the app closes at once, its
 * git command ended with every process it started.
 */
describe('Shutting down while the vote is being pushed', () => {
  // git runs GIT_SSH_COMMAND through sh for the ssh:// remote: sh and sleep, never an answer.
  const marker = `sleep 26.${process.pid}${Date.now() % 1000}`;
  let replay: ChainReplay;
  let dataDir: string;
  let app: TestApp | undefined;

  beforeAll(async () => {
    process.env.GIT_SSH_COMMAND = `${marker}; false`;
    replay = await startChainReplay();
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-publish-shutdown-'));
    app = await startTestApp(
      publicationEnvironment({
        subtensorUrl: replay.url,
        gravityUrl: 'ssh://git@127.0.0.1/gravity.git',
        dataDir,
        netuid: 1,
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await replay?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    delete process.env.GIT_SSH_COMMAND;
  }, 180_000);

  it('ends the git command and closes within seconds', async () => {
    const { key } = await createKey(app!, { tier: 'validator' });
    await app!.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', key)
      .send({
        desirabilities: [{ id: 'tao', weight: 1, params: { platform: 'x', label: '#tao' } }],
      })
      .expect(200);
    const publishing = app!.app.get(PublicationWorker).runOnce();
    const started = Date.now();
    while (runningProcesses(marker).length === 0 && Date.now() - started < 20_000) await pause(20);
    expect(runningProcesses(marker)).not.toEqual([]);

    const closing = Date.now();
    const closed = app!.close().then(() => Date.now() - closing);
    let deadline: NodeJS.Timeout | undefined;
    const within = await Promise.race([
      closed,
      new Promise<undefined>(
        (resolve) => (deadline = setTimeout(() => resolve(undefined), 20_000)),
      ),
    ]);
    clearTimeout(deadline);
    expect(within).toBeLessThan(10_000);
    app = undefined;
    await publishing;
    await expect(processesLeft(marker)).resolves.toEqual([]);
  }, 60_000);
});
