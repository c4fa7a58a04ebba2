import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { MinerBehaviour } from '../../src/devnet/behaviour';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { DataItem, RedditItem } from '../../src/network/protocol';
import { startTestNetwork, TestNetwork } from '../support/network';
import { readParquet } from '../support/parquet-reader';
import { registerTask } from '../support/tasks';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { asBytes, jsonLines } from '../support/downloads';

const ENDPOINT = '/api/v1/on_demand_data_request';
/**
 * What every miner appends to a record's text (devnet fault brokenText), as the gateway keeps it.
 */
const CLEANED = ' ab \ufffd \ufffd';

const textOf = (item: DataItem) => (item.source === 'X' ? item.text : item.body);

/** Every item is the corpus item with CLEANED after its text: no U+0000, no lone surrogate. */
function expectCleaned(items: readonly DataItem[], network: TestNetwork) {
  const corpus = new Map(network.devnet.corpus.items.map((item) => [item.uri, item]));
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) {
    const original = corpus.get(item.uri)!;
    expect(textOf(item)).toBe(`${textOf(original)}${CLEANED}`);
    // X's deprecated `content` repeats the text; Reddit's is made from the title and body.
    if (item.source === 'X') expect(item.content).toBe(item.text);
    else expect(item.content.endsWith(`${(original as RedditItem).body}${CLEANED}`)).toBe(true);
  }
}

async function startApp(miners: MinerBehaviour, env: Record<string, string>) {
  const network = await startTestNetwork(
    Array.from({ length: 3 }, () => ({ behaviour: { ...miners, brokenText: true } })),
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-miner-text-'));
  const app = await startTestApp(
    {
      ...network.env,
      DATA_DIR: dataDir,
      QUERY_MINERS: '3',
      QUERY_CACHE_TTL_SECONDS: '0',
      INDEX_SPOT_CHECKS: '0',
      TASK_COLLECT_LIMIT: '1000',
      ...env,
    },
    { ownDatabase: true },
  );
  return { network, app, dataDir };
}

/**
 * Miners whose records' text holds U+0000 and unpaired UTF-16 surrogates, which JSON carries and
 * Postgres stores in neither text nor jsonb: the gateway keeps such text without U+0000 and with
 * U+FFFD for each unpaired surrogate, the same in answers, the item store, task items and both
 * dataset formats.
 */
describe('Text from miners that Postgres cannot store as sent', () => {
  describe('answered live', () => {
    let network: TestNetwork;
    let app: TestApp;
    let dataDir: string;

    beforeAll(async () => {
      ({ network, app, dataDir } = await startApp({}, { QUERY_QUORUM: '2' }));
    });
    afterAll(async () => {
      await app?.close();
      await network?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('answers the items with their text cleaned', async () => {
      const response = await app.http
        .post(ENDPOINT)
        .set('X-API-Key', TEST_MASTER_KEY)
        .send({ source: 'X', keywords: ['#bitcoin'], limit: 20 })
        .expect(200);
      expect(response.body.meta.origin).toBe('live');
      expectCleaned(response.body.data as DataItem[], network);
    });

    it("collects a task's items and writes both dataset formats with the same cleaned text", async () => {
      await registerTask(app.app, '5ValidatorHotkeyForMinerText', 'broken-text', '#bitcoin');
      const lifecycle = app.app.get(TaskLifecycleService);
      expect(await lifecycle.collectDue()).toBe(1);
      const database = app.app.get(DataSource);
      const [{ count }] = await database.query<{ count: number }[]>(
        `SELECT count(*)::int AS count FROM task_items WHERE task_id = 'broken-text'`,
      );
      expect(count).toBeGreaterThan(0);
      await database.query(
        `UPDATE scraping_tasks SET expires_at = registered_at WHERE id = 'broken-text'`,
      );
      expect(await lifecycle.compileExpired()).toBe(1);

      const get = (path: string) =>
        asBytes(
          app.http
            .get(`/api/v1/tasks/broken-text/dataset${path}`)
            .set('X-API-Key', TEST_MASTER_KEY),
        ).expect(200);
      const items = jsonLines<DataItem>((await get('')).body as Buffer);
      expect(items).toHaveLength(count);
      expectCleaned(items, network);
      const file = join(dataDir, 'broken-text.parquet');
      writeFileSync(file, (await get('?format=parquet')).body as Buffer);
      const { rows } = await readParquet(file);
      expect(rows.map((row) => row.text)).toEqual(items.map(textOf));
    });
  });

  describe('answered from stored data', () => {
    let network: TestNetwork;
    let app: TestApp;
    let dataDir: string;

    beforeAll(async () => {
      ({ network, app, dataDir } = await startApp({ noOnDemand: true }, {}));
      await app.app.get(IndexSyncService).runIfDue();
      await app.app.get(NetworkService).settled();
    });
    afterAll(async () => {
      await app?.close();
      await network?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps the items in the store and answers them with their text cleaned', async () => {
      for (const [source, keyword] of [
        ['X', '#bitcoin'],
        ['REDDIT', 'r/bitcoin'],
      ]) {
        const response = await app.http
          .post(ENDPOINT)
          .set('X-API-Key', TEST_MASTER_KEY)
          .send({ source, keywords: [keyword], limit: 20 })
          .expect(200);
        expect(response.body.meta.origin).toBe('stored');
        expectCleaned(response.body.data as DataItem[], network);
      }
      const [{ count }] = await app.app
        .get(DataSource)
        .query<{ count: number }[]>('SELECT count(*)::int AS count FROM stored_items');
      expect(count).toBeGreaterThan(0);
    });
  });
});
