import { DataSource, QueryRunner } from 'typeorm';
import { StoredXItemSeconds1764960000000 } from '../../src/database/migrations/1764960000000-StoredXItemSeconds';
import { generateCorpus } from '../../src/devnet/corpus';
import { toMinute } from '../../src/devnet/corpus-text';
import { DataItem, RedditItem, timeBucketId, XItem } from '../../src/network/protocol';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const NOW = new Date('2026-12-05T12:00:00Z');
const corpus = generateCorpus({ seed: 5, now: NOW, size: { x: 40, reddit: 10 } }).items;
const offMinute = (item: DataItem) => !item.datetime.endsWith(':00.000Z');
const [minuteX, secondX, oldX] = corpus.filter(
  (item): item is XItem => item.source === 'X' && offMinute(item),
);
const reddit = corpus.find((item): item is RedditItem => item.source === 'REDDIT')!;

/** A post whose id (below the first snowflake) holds no time. */
const timeless: XItem = {
  ...oldX,
  uri: `https://x.com/${oldX.user.username}/status/20`,
  datetime: toMinute(oldX.datetime),
  tweet: { ...oldX.tweet, id: '20' },
};

/**
 * X items stored before `convertContent` dated them to their id's second kept their record's
 * minute; the migration moves them to that second, and leaves every other row as it was. Run
 * on a database of its own, whose rows it rewrites.
 */
describe(StoredXItemSeconds1764960000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let runner: QueryRunner;
  let store: ItemStoreRepository;

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'xseconds' });
    database = medium.dataSource;
    runner = database.createQueryRunner();
    store = new ItemStoreRepository(database);
  });
  afterAll(async () => {
    await runner.release();
    await medium.close();
  });

  const delivery = (source: 1 | 2, items: DataItem[]) => ({
    bucket: { source, label: null, timeBucket: timeBucketId(new Date(items[0].datetime)) },
    minerUid: 1,
    minerHotkey: 'hk-1',
    fetchedAt: NOW,
    claimedBytes: 1000,
    items: items.map((item) => ({
      item,
      timeBucket: timeBucketId(new Date(item.datetime)),
      contentBytes: 100,
    })),
  });
  const stored = async (source: 1 | 2, from: Date | null = null) =>
    (await store.find({ source, from, to: NOW, usernames: [], limit: 100 })).map(({ item }) => [
      item.uri,
      item.datetime,
    ]);

  it("dates stored X rows of a whole minute to their id's second, and no other row", async () => {
    const asStored = { ...minuteX, datetime: toMinute(minuteX.datetime) };
    await store.save(delivery(2, [asStored, secondX, timeless]), delivery(1, [reddit]));
    const redditBefore = await stored(1);

    await runner.startTransaction();
    await new StoredXItemSeconds1764960000000().up(runner);
    await runner.commitTransaction();

    expect((await stored(2)).sort()).toEqual(
      [
        [minuteX.uri, minuteX.datetime],
        [secondX.uri, secondX.datetime],
        [timeless.uri, timeless.datetime],
      ].sort(),
    );
    // The column moved with the item: a bound at the post's second finds it, one after does not.
    const posted = new Date(minuteX.datetime);
    expect(await stored(2, posted)).toContainEqual([minuteX.uri, minuteX.datetime]);
    const after = new Date(posted.getTime() + 1000);
    expect((await stored(2, after)).map(([uri]) => uri)).not.toContain(minuteX.uri);
    expect(await stored(1)).toEqual(redditBefore);
    expect(redditBefore).toEqual([[reddit.uri, reddit.datetime]]);
  });
});
