import { Client } from 'pg';
import { DataSource, EntitySubscriberInterface } from 'typeorm';
import { ApiKeyEntity } from '../../src/modules/api-keys/api-key.entity';
import { ApiKeysRepository } from '../../src/modules/api-keys/api-keys.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

/**
 * The key list's page and its total (X-Total-Count) come from one snapshot: a key created
 * between the two reads made the header count one more than the pages held (found by a review).
 */
describe('ApiKeysRepository.list', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: ApiKeysRepository;
  let other: Client;
  /** Runs once, as soon as the page's rows are loaded, before the count is read. */
  let betweenReads: (() => Promise<unknown>) | undefined;

  const insertKey = (client: { query: DataSource['query'] | Client['query'] }, name: string) =>
    (client.query as DataSource['query'])(
      `INSERT INTO api_keys (name, key_hash, prefix, tier) VALUES ($1::text, md5($1::text) || md5($1::text || 'x'), 'p', 'regular')`,
      [name],
    );

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'keylist', entities: [ApiKeyEntity] });
    database = medium.dataSource;
    const subscriber: EntitySubscriberInterface<ApiKeyEntity> = {
      listenTo: () => ApiKeyEntity,
      afterLoad: async () => {
        const run = betweenReads;
        betweenReads = undefined;
        await run?.();
      },
    };
    database.subscribers.push(subscriber);
    repository = new ApiKeysRepository(database);
    other = new Client({ connectionString: (database.options as { url: string }).url });
    await other.connect();
    for (const name of ['first', 'second', 'third']) await insertKey(database, name);
  });
  afterAll(async () => {
    await other.end();
    await medium.close();
  });

  it('counts the keys of the page it lists, though a key is created between the reads', async () => {
    betweenReads = () => insertKey(other, 'created-meanwhile');
    const [page, total] = await repository.list({}, 2, 0);
    expect(betweenReads).toBeUndefined();
    expect(page.map((key) => key.name)).toEqual(['first', 'second']);
    expect(total).toBe(3);
    // The next list sees it.
    expect((await repository.list({}, 2, 0))[1]).toBe(4);
  });

  it('counts as it filters, though a key is deactivated between the reads', async () => {
    betweenReads = () => other.query(`UPDATE api_keys SET is_active = false WHERE name = 'third'`);
    const [page, total] = await repository.list({ isActive: true }, 1, 1);
    expect(page.map((key) => key.name)).toEqual(['second']);
    expect(total).toBe(4);
    expect((await repository.list({ isActive: true }, 1, 1))[1]).toBe(3);
  });
});
