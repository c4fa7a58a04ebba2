import { DataSource, QueryRunner } from 'typeorm';
import { ItemStore1764600000000 } from '../../src/database/migrations/1764600000000-ItemStore';
import { generateCorpus } from '../../src/devnet/corpus';
import { DataItem, timeBucketId } from '../../src/network/protocol';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const NOW = new Date('2025-11-20T12:00:00Z');
const corpus = generateCorpus({ seed: 3, now: NOW, size: { x: 40, reddit: 40 } }).items;
const bucketOf = (item: DataItem) => timeBucketId(new Date(item.datetime));

/** Four items of the corpus moved into one bucket: the first's hour and label. */
function bucketItems(source: DataItem['source'], labelled: boolean): DataItem[] {
  const chosen = corpus
    .filter((item) => item.source === source && (item.label !== null) === labelled)
    .slice(0, 4);
  const hour = bucketOf(chosen[0]) * 3_600_000;
  return chosen.map((item, index) => ({
    ...item,
    label: chosen[0].label,
    datetime: new Date(hour + index * 60_000).toISOString(),
  })) as DataItem[];
}

interface OldFetch {
  source: number;
  label: string | null;
  hotkey: string;
  uid: number;
  fetchedAt: string;
  items: DataItem[];
}

/**
 * The ItemStore migration moves the rows of the `bucket_fetches` table it replaces. Run on a
 * database of its own: `down` brings back the old table, rows in its shape are inserted, and
 * `up` runs again, as it would on a deployment that kept bucket fetches.
 */
describe(ItemStore1764600000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let runner: QueryRunner;
  const migration = new ItemStore1764600000000();

  const inTransaction = async (work: (runner: QueryRunner) => Promise<void>) => {
    await runner.startTransaction();
    await work(runner);
    await runner.commitTransaction();
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'itemmigrate' });
    database = medium.dataSource;
    runner = database.createQueryRunner();
    await inTransaction((runner) => migration.down(runner));
  });
  afterAll(async () => {
    await runner.release();
    await medium.close();
  });

  it("moves every fetch and its items into the store, merging miners' copies by uri", async () => {
    const xBucket = bucketItems('X', true);
    const unlabeled = bucketItems('X', false);
    const reddit = bucketItems('REDDIT', true);
    const fetches: OldFetch[] = [
      {
        source: 2,
        label: xBucket[0].label,
        hotkey: 'hk-1',
        uid: 1,
        fetchedAt: '2025-11-20T10:00:00Z',
        items: xBucket,
      },
      // A second miner sent part of the same bucket, later.
      {
        source: 2,
        label: xBucket[0].label,
        hotkey: 'hk-2',
        uid: 2,
        fetchedAt: '2025-11-20T11:00:00Z',
        items: xBucket.slice(0, 1),
      },
      {
        source: 2,
        label: null,
        hotkey: 'hk-1',
        uid: 1,
        fetchedAt: '2025-11-20T10:00:00Z',
        items: unlabeled,
      },
      {
        source: 1,
        label: reddit[0].label,
        hotkey: 'hk-3',
        uid: 3,
        fetchedAt: '2025-11-20T09:00:00Z',
        items: reddit,
      },
      {
        source: 1,
        label: 'r/empty',
        hotkey: 'hk-3',
        uid: 3,
        fetchedAt: '2025-11-20T09:00:00Z',
        items: [],
      },
    ];
    for (const fetch of fetches) {
      const timeBucket = fetch.items[0] ? bucketOf(fetch.items[0]) : timeBucketId(NOW) - 5;
      await database.query(
        `INSERT INTO bucket_fetches (source, label, time_bucket, miner_hotkey, miner_uid, fetched_at, claimed_bytes, items)
         VALUES ($1, $2, $3, $4, $5, $6, 5000, $7::jsonb)`,
        [
          fetch.source,
          fetch.label,
          timeBucket,
          fetch.hotkey,
          fetch.uid,
          fetch.fetchedAt,
          JSON.stringify(fetch.items),
        ],
      );
    }

    await inTransaction((runner) => migration.up(runner));

    const [{ exists }] = await database.query<{ exists: boolean }[]>(
      `SELECT to_regclass('bucket_fetches') IS NOT NULL AS exists`,
    );
    expect(exists).toBe(false);
    const store = new ItemStoreRepository(database);
    const x = await store.find({
      source: 2,
      from: null,
      to: NOW,
      usernames: [],
      limit: 100,
      labels: [xBucket[0].label],
    });
    expect(x.map(({ item }) => item).sort(byUri)).toEqual([...xBucket].sort(byUri));
    const shared = x.find(({ item }) => item.uri === xBucket[0].uri)!;
    expect(shared.deliveredBy.sort()).toEqual(['hk-1', 'hk-2']);
    expect(shared.fetchedAt).toEqual(new Date('2025-11-20T11:00:00Z'));
    expect(shared.contentBytes).toBeGreaterThan(0);
    const nulls = await store.find({
      source: 2,
      from: null,
      to: NOW,
      usernames: [],
      limit: 100,
      labels: [null],
    });
    expect(nulls.map(({ item }) => item.uri).sort()).toEqual(
      unlabeled.map((item) => item.uri).sort(),
    );
    const redditFound = await store.find({
      source: 1,
      from: null,
      to: NOW,
      usernames: [],
      limit: 100,
    });
    expect(redditFound).toHaveLength(reddit.length);
    // The username filter works on moved rows too.
    const author = reddit[0].source === 'REDDIT' ? reddit[0].username.toLowerCase() : '';
    expect(
      (await store.find({ source: 1, from: null, to: NOW, usernames: [author], limit: 100 }))
        .length,
    ).toBeGreaterThan(0);

    const moved = await store.fetches(1, [reddit[0].label, 'r/empty'], 0, timeBucketId(NOW));
    expect(moved.map((fetch) => [fetch.bucket.label, fetch.itemCount]).sort()).toEqual(
      [
        [reddit[0].label, reddit.length],
        ['r/empty', 0],
      ].sort(),
    );
    const xFetches = await store.fetches(2, [xBucket[0].label, null], 0, timeBucketId(NOW));
    expect(xFetches).toHaveLength(3);
    expect(xFetches.find((fetch) => fetch.minerHotkey === 'hk-2')).toMatchObject({
      minerUid: 2,
      claimedBytes: 5000,
      itemCount: 1,
      fetchedAt: new Date('2025-11-20T11:00:00Z'),
    });
  });

  it('goes back to bucket_fetches with each fetch holding the items its miner delivered', async () => {
    await inTransaction((runner) => migration.down(runner));
    const rows = await database.query<
      { miner_hotkey: string; label: string | null; count: number }[]
    >(
      `SELECT miner_hotkey, label, jsonb_array_length(items) AS count FROM bucket_fetches ORDER BY 1, 2`,
    );
    const xBucket = bucketItems('X', true);
    expect(rows).toEqual(
      expect.arrayContaining([
        { miner_hotkey: 'hk-1', label: xBucket[0].label, count: xBucket.length },
        { miner_hotkey: 'hk-2', label: xBucket[0].label, count: 1 },
        { miner_hotkey: 'hk-3', label: 'r/empty', count: 0 },
      ]),
    );
    expect(rows).toHaveLength(5);
    // And up again, as a deployment rolled forward after a rollback would.
    await inTransaction((runner) => migration.up(runner));
    const [{ count }] = await database.query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM stored_bucket_fetches',
    );
    expect(count).toBe(5);
  });
});

function byUri(a: DataItem, b: DataItem): number {
  return a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0;
}
