import { DataSource, QueryRunner } from 'typeorm';
import { StoredItemsLabelKey1765000000000 } from '../../src/database/migrations/1765000000000-StoredItemsLabelKey';
import { generateCorpus } from '../../src/devnet/corpus';
import { timeBucketId, XItem } from '../../src/network/protocol';
import { BucketDelivery } from '../../src/network/stored/item-store';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const NOW = new Date('2026-12-06T12:00:00Z');
const post = generateCorpus({ seed: 7, now: NOW, size: { x: 5, reddit: 0 } }).items.find(
  (item): item is XItem => item.source === 'X',
)!;

/**
 * The key with the label lets a post have a row per label in an hour; going back keeps, of each
 * post's rows in an hour, the one stored first, and the old primary key. Run on a database of
 * its own, whose key it changes.
 */
describe(StoredItemsLabelKey1765000000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let runner: QueryRunner;
  let store: ItemStoreRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'labelkey' });
    database = medium.dataSource;
    runner = database.createQueryRunner();
    store = new ItemStoreRepository(database);
  });
  afterAll(async () => {
    await runner.release();
    await medium.close();
  });

  const delivery = (hotkey: string, label: string | null, at: string): BucketDelivery => ({
    bucket: { source: 2, label, timeBucket: timeBucketId(new Date(post.datetime)) },
    minerUid: 1,
    minerHotkey: hotkey,
    fetchedAt: new Date(at),
    claimedBytes: 1000,
    items: [
      {
        item: { ...post, label },
        timeBucket: timeBucketId(new Date(post.datetime)),
        contentBytes: 100,
      },
    ],
  });
  const rows = () =>
    database.query<{ label: string | null; delivered_by: string[] }[]>(
      'SELECT label, delivered_by FROM stored_items ORDER BY first_fetched_at, label',
    );
  const keys = async () =>
    (
      await database.query<{ conname: string }[]>(
        `SELECT conname FROM pg_constraint
         WHERE conrelid = 'stored_items'::regclass AND contype IN ('p', 'u') ORDER BY 1`,
      )
    ).map(({ conname }) => conname);
  const migrate = async (step: 'up' | 'down') => {
    await runner.startTransaction();
    await new StoredItemsLabelKey1765000000000()[step](runner);
    await runner.commitTransaction();
  };

  it("keeps a row per label and, reverted, each post's first row", async () => {
    await store.save(delivery('hk-2', '#b', '2026-12-06T10:00:00Z'));
    await store.save(delivery('hk-1', '#a', '2026-12-06T09:00:00Z'));
    await store.save(delivery('hk-3', null, '2026-12-06T11:00:00Z'));
    await store.save(delivery('hk-4', '#a', '2026-12-06T11:30:00Z'));
    expect(await rows()).toEqual([
      { label: '#a', delivered_by: ['hk-1', 'hk-4'] },
      { label: '#b', delivered_by: ['hk-2'] },
      { label: null, delivered_by: ['hk-3'] },
    ]);
    expect(await keys()).toEqual(['stored_items_key']);

    await migrate('down');
    expect(await rows()).toEqual([{ label: '#a', delivered_by: ['hk-1', 'hk-4'] }]);
    expect(await keys()).toEqual(['stored_items_pkey']);

    await migrate('up');
    expect(await keys()).toEqual(['stored_items_key']);
    await store.save(delivery('hk-2', '#b', '2026-12-06T12:00:00Z'));
    expect(await rows()).toEqual([
      { label: '#a', delivered_by: ['hk-1', 'hk-4'] },
      { label: '#b', delivered_by: ['hk-2'] },
    ]);
  });
});
