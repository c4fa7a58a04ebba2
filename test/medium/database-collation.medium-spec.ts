import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { UnusableDatabase } from '../../src/common/lifecycle/startup-failure';
import { generateCorpus } from '../../src/devnet/corpus';
import { migrateDatabase } from '../../src/database/migrate';
import { AuthorItemsRepository } from '../../src/modules/erasure/author-items.repository';
import { erasedAuthor } from '../../src/modules/erasure/erased-author';
import { RedditItem, timeBucketId } from '../../src/network/protocol';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

/**
 * The database as a deployment may make it, not as the tests' server does (C.UTF-8): names
 * compare alike whatever the collation, and an encoding that cannot hold every script is
 * refused before anything is migrated. Turkish is the collation that differs from every other
 * in ASCII (`lower('I')` is `ı`), an ICU one so that the server needs no OS locale for it.
 */
describe('A database of another collation or encoding', () => {
  describe('under a Turkish collation', () => {
    let medium: MediumDatabase;
    let database: DataSource;

    beforeAll(async () => {
      medium = await openMediumDatabase({
        own: 'turkish',
        settings:
          "TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'tr-TR'",
      });
      database = medium.dataSource;
      const [{ lowered }] = await database.query<{ lowered: string }[]>(
        "SELECT lower('I') AS lowered",
      );
      expect(lowered).toBe('ı'); // the collation the cases below are about
    });
    afterAll(() => medium.close());

    it("finds an author's collected items whatever the case of their handle's I", async () => {
      await database.query(
        `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at)
         VALUES ('x-task', 'x', '#ai', 'active', '5Hotkey', now(), now() + interval '7 days')`,
      );
      for (const [n, username] of ['IrinaK', 'irinak', '@IRINAK', 'Iris'].entries())
        await database.query(
          `INSERT INTO task_items (task_id, uri, datetime, item, collected_at)
           VALUES ('x-task', $1, now(), $2, now())`,
          [`https://x.com/h/status/${n + 1}`, JSON.stringify({ source: 'X', user: { username } })],
        );

      const counts = await new AuthorItemsRepository(database).countInTasks(
        erasedAuthor('X', 'irinak'),
      );

      expect([...counts]).toEqual([['x-task', 3]]);
    });

    it("counts two miners' copies of a post as one whatever the case of an I in their names", async () => {
      const post = structuredClone(
        generateCorpus({ seed: 17, size: { x: 0, reddit: 5 } }).items.find(
          (item): item is RedditItem => item.source === 'REDDIT' && item.dataType === 'post',
        )!,
      );
      post.uri = post.url = 'https://www.reddit.com/r/bitcoin/comments/abc123/';
      post.id = 't3_abc123';
      post.label = 'r/bitcoin';
      post.communityName = 'r/Bitcoin';
      post.username = 'IrinaK';
      // As another scraper spells the same post's names.
      const respelled = { ...post, communityName: 'r/BITCOIN', username: 'irinak' };
      const store = new ItemStoreRepository(database);
      for (const [hotkey, item] of [
        ['hotkey-1', post],
        ['hotkey-2', respelled],
      ] as const) {
        const timeBucket = timeBucketId(new Date(item.datetime));
        await store.save({
          bucket: { source: 1, label: item.label, timeBucket },
          minerUid: Number(hotkey.slice(-1)),
          minerHotkey: hotkey,
          fetchedAt: new Date(),
          claimedBytes: 1000,
          items: [{ item, timeBucket, contentBytes: 200 }],
        });
      }

      const rows = await database.query<{ delivered_by: string[] }[]>(
        'SELECT delivered_by FROM stored_items',
      );
      expect(rows).toEqual([{ delivered_by: ['hotkey-1', 'hotkey-2'] }]);
    });
  });

  it.each(['LATIN1', 'SQL_ASCII'])(
    'refuses a database in %s before migrating it, naming the encoding',
    async (encoding) => {
      const serverUrl = process.env.TEST_RUN_SERVER_URL!;
      const name = scratchDatabaseName(encoding.toLowerCase());
      const url = await createDatabase(
        serverUrl,
        name,
        `TEMPLATE template0 ENCODING '${encoding}' LOCALE 'C'`,
      );
      try {
        const refusal = migrateDatabase(url);
        await expect(refusal).rejects.toBeInstanceOf(UnusableDatabase);
        await expect(refusal).rejects.toThrow(
          `the database's encoding is ${encoding}: the gateway stores text of every script`,
        );
        const client = new Client({ connectionString: url });
        await client.connect();
        const tables = await client
          .query("SELECT 1 FROM pg_tables WHERE schemaname = 'public'")
          .finally(() => client.end());
        expect(tables.rowCount).toBe(0);
      } finally {
        await dropDatabase(serverUrl, name);
      }
    },
  );
});
