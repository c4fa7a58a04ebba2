import { readFile } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { writeMetagraphFile } from '../../src/devnet/metagraph';
import { IndexSyncService } from '../../src/network/index-sync.service';
import { MetagraphService } from '../../src/network/metagraph/metagraph.service';
import { NetworkService } from '../../src/network/network.service';
import { MetagraphFile } from '../../src/network/protocol';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/** What the statistics stop counting: deregistered uids. */
describe('Index retention', () => {
  let network: TestNetwork;
  let app: TestApp;
  let database: DataSource;

  beforeAll(async () => {
    network = await startTestNetwork(3);
    app = await startTestApp(
      { ...network.env, VALIDATOR_SHARES_HOTKEY: 'false' },
      { ownDatabase: true },
    );
    database = app.app.get(DataSource);
    await sync();
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  /** Runs the sync now, as if the interval had passed. */
  async function sync() {
    await database.query('DELETE FROM job_runs');
    const report = await app.app.get(IndexSyncService).runIfDue();
    await app.app.get(NetworkService).settled();
    return report!;
  }
  const get = (path: string) => app.http.get(`/api/v1/${path}`).set('X-API-Key', TEST_MASTER_KEY);

  /** Bytes per uid in the index. */
  async function indexedBytes(): Promise<Map<number, number>> {
    const rows = await database.query<{ uid: number; bytes: string }[]>(
      'SELECT miner_uid AS uid, sum(content_size_bytes)::text AS bytes FROM miner_index GROUP BY 1',
    );
    return new Map(rows.map((row) => [row.uid, Number(row.bytes)]));
  }

  /** Bytes over every hour /ages lists, both sources, and the oldest hour listed. */
  async function ages(): Promise<{ bytes: number; oldest: number }> {
    let bytes = 0;
    let oldest = Infinity;
    for (const source of ['x', 'reddit']) {
      const rows = (await get(`ages?source=${source}`).expect(200)).body as {
        time_bucket_id: number;
        content_size_bytes: number;
      }[];
      for (const row of rows) {
        bytes += row.content_size_bytes;
        oldest = Math.min(oldest, row.time_bucket_id);
      }
    }
    return { bytes, oldest };
  }

  const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + value, 0);

  it('stops counting a uid once the metagraph no longer lists it', async () => {
    const before = await indexedBytes();
    expect([...before.keys()].sort()).toEqual([0, 1, 2]);
    expect((await ages()).bytes).toBe(sum(before.values()));

    const file = network.env.METAGRAPH_FILE;
    const metagraph = JSON.parse(await readFile(file, 'utf8')) as MetagraphFile;
    await writeMetagraphFile(file, {
      ...metagraph,
      neurons: metagraph.neurons.filter((neuron) => neuron.uid !== 2),
    });
    await app.app.get(MetagraphService).sync();

    const after = await indexedBytes();
    expect(after.has(2)).toBe(false);
    expect((await ages()).bytes).toBe(sum(after.values()));
  });
});
