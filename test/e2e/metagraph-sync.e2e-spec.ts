import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { writeMetagraphFile } from '../../src/devnet/metagraph';
import { MinerIndexService } from '../../src/network/index/miner-index.service';
import { MetagraphService } from '../../src/network/metagraph/metagraph.service';
import { NetworkService } from '../../src/network/network.service';
import { MetagraphNeuron } from '../../src/network/protocol';
import { metagraphNeuron } from '../support/neurons';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

const HOUR = 490_000;

/** What the metagraph service does with each read, whatever the source (a file here). */
describe('Applying a metagraph', () => {
  const directory = mkdtempSync(join(tmpdir(), 'metagraph-sync-'));
  const file = join(directory, 'metagraph.json');
  let app: TestApp;
  let database: DataSource;

  const write = (neurons: MetagraphNeuron[]) =>
    writeMetagraphFile(file, {
      netuid: 13,
      block: 100 + neurons.length,
      updated_at: new Date().toISOString(),
      neurons,
    });
  const sync = () => app.app.get(MetagraphService).sync();
  const minerRow = async (uid: number) =>
    (
      await database.query<{ hotkey: string; credibility: number; state: string }[]>(
        'SELECT hotkey, credibility, state FROM miners WHERE uid = $1',
        [uid],
      )
    )[0];
  const indexedBytes = async (uid: number) =>
    Number(
      (
        await database.query<{ bytes: string }[]>(
          'SELECT coalesce(sum(bytes), 0)::text AS bytes FROM miner_bucket_totals WHERE miner_uid = $1',
          [uid],
        )
      )[0].bytes,
    );

  beforeAll(async () => {
    await write([
      metagraphNeuron(0),
      metagraphNeuron(1),
      metagraphNeuron(2),
      metagraphNeuron(3, { axon_url: null, validator_permit: true, stake: 50_000 }),
    ]);
    app = await startTestApp({ METAGRAPH_FILE: file }, { ownDatabase: true });
    database = app.app.get(DataSource);
  });
  afterAll(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('records the source and block, and lists the validators with their stake', async () => {
    const list = await app.http.get('/api/v1/miners').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    expect(list.body).toMatchObject({ block: 104, source: `file ${file}` });
    expect(list.body.miners.map((miner: { state: string }) => miner.state)).toEqual([
      'active',
      'active',
      'active',
      'validator',
    ]);
    // The stake shares of the desirability aggregate come from here.
    expect(app.app.get(NetworkService).validatorStakes()).toEqual(new Map([['hotkey-3', 50_000]]));
  });

  it('starts a uid over when its hotkey changes: credibility 0.5, no index', async () => {
    const indexes = app.app.get(MinerIndexService);
    for (const uid of [1, 2])
      await indexes.replaceMinerIndex(uid, [
        { source: 2, label: '#a', timeBucket: HOUR, bytes: 1000 },
      ]);
    await database.query('UPDATE miners SET credibility = 0.9 WHERE uid IN (1, 2)');

    await write([
      metagraphNeuron(0),
      metagraphNeuron(1, { hotkey: 'hotkey-1-new-owner' }),
      metagraphNeuron(2),
      metagraphNeuron(3, { axon_url: null, validator_permit: true, stake: 50_000 }),
    ]);
    await sync();

    expect(await minerRow(1)).toMatchObject({ hotkey: 'hotkey-1-new-owner', credibility: 0.5 });
    expect(await indexedBytes(1)).toBe(0);
    // The unchanged uid keeps both.
    expect(await minerRow(2)).toMatchObject({ credibility: 0.9 });
    expect(await indexedBytes(2)).toBe(1000);
  });

  it('refuses a read that would deregister most neurons at once, and applies a smaller loss', async () => {
    await write([metagraphNeuron(0)]);
    await sync();
    expect((await minerRow(1)).state).toBe('active');
    expect((await app.app.get(NetworkService).metagraphStatus()).lastAttempt).toMatchObject({
      ok: false,
      error: expect.stringMatching(/suspicious: it would deregister 3 of 4 registered neurons/),
    });

    await write([
      metagraphNeuron(0),
      metagraphNeuron(1, { hotkey: 'hotkey-1-new-owner' }),
      metagraphNeuron(2),
    ]);
    await sync();
    expect((await minerRow(3)).state).toBe('deregistered');
    expect((await app.app.get(NetworkService).metagraphStatus()).lastAttempt?.ok).toBe(true);
  });
});
