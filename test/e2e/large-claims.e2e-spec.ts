import { DataSource } from 'typeorm';
import { NetworkService } from '../../src/network/network.service';
import { startTestNetwork, TestNetwork } from '../support/network';
import { syncIndexNow } from '../support/index-sync';
import { startTestApp, TestApp } from '../support/test-app';

const OVERCLAIMER = 2;

/**
 * Spot checks of buckets claimed larger than an answer is read whole (half of
 * MINER_MAX_RESPONSE_BYTES): at its floor, 1 KiB, every devnet bucket is such a claim. Before,
 * no check could pick one, so a miner claiming more than a check could fetch was never caught
 * and the statistics counted it (a hostile-miner audit's finding). Now each is checked as its
 * answer arrives, through the real client and the devnet's axons.
 */
describe('Spot checks of large claims', () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork([{}, {}, { behaviour: { overclaimSizes: 3 } }]);
    app = await startTestApp(
      {
        ...network.env,
        MINER_MAX_RESPONSE_BYTES: '1024',
        INDEX_SYNC_ON_START: 'false',
        INDEX_SPOT_CHECKS: '10',
        // Every miner is checked: this gateway has the hotkey to itself.
        VALIDATOR_SHARES_HOTKEY: 'false',
      },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it("picks the spot checks' buckets from the large claims too, and fails the overclaimer", async () => {
    const report = await syncIndexNow(app);
    expect(report).toMatchObject({ synced: 3, failed: 0 });
    const liar = report.spotChecks.find((check) => check.uid === OVERCLAIMER);
    expect(liar?.score).toBeLessThan(0.5);
  });

  it('checks a claim past the answer cap as its answer arrives: true of honest miners, false of the overclaimer', async () => {
    // The index of the sync above; each miner's second bucket call of the hour.
    const network = app.app.get(NetworkService);
    const miners = new Map(network.availableMiners('GetDataEntityBucket').map((m) => [m.uid, m]));
    for (const uid of [0, 1, OVERCLAIMER]) {
      // The miner's largest bucket: far past the 512 bytes an answer read whole may claim.
      const [row] = await app.app
        .get(DataSource)
        .query<{ source: 1 | 2; label: string | null; time_bucket: number; bytes: number }[]>(
          `SELECT i.source, l.value AS label, i.time_bucket, i.content_size_bytes::int AS bytes
         FROM miner_index i LEFT JOIN labels l ON l.id = i.label_id
         WHERE i.miner_uid = $1 ORDER BY i.content_size_bytes DESC, i.time_bucket LIMIT 1`,
          [uid],
        );
      expect(row.bytes).toBeGreaterThan(2 * 1024);
      const bucket = { source: row.source, label: row.label, timeBucket: row.time_bucket };
      const outcome = await network.spotCheckBucket(miners.get(uid)!, bucket, row.bytes);
      if (!outcome.ok) throw new Error(`miner ${uid}: ${outcome.message}`);
      if (uid === OVERCLAIMER) {
        // It sent a third of what it claimed.
        expect(outcome.check.score).toBeLessThan(0.5);
        expect(outcome.check.problems).toEqual([
          `claimed ${row.bytes} bytes, returned ${Math.round(row.bytes / 3)}`,
        ]);
      } else expect(outcome.check).toEqual({ score: 1, problems: [], items: [] });
    }
  });
});
