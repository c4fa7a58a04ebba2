import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataArgsStorage } from 'typeorm';
import { ApiKeyEntity } from '../../src/modules/api-keys/api-key.entity';
import { MinerEntity } from '../../src/network/miner.entity';
import { MinersRepository } from '../../src/network/miners.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { metagraphNeuron } from '../support/neurons';
import { minerIndexOn } from '../support/miner-index';

const SRC = join(__dirname, '../../src');

/** Every file under src that declares an entity (`@Entity(`), found by reading them. */
function entityFiles(folder = SRC): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entityFiles(path);
    return entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.spec.ts') &&
      readFileSync(path, 'utf8').includes('@Entity(')
      ? [path]
      : [];
  });
}

/** The classes those files declare as entities: every table the app maps, not a list kept by hand. */
async function entitiesOfSrc(): Promise<unknown[]> {
  for (const file of entityFiles()) await import(file);
  const declared = new Set(getMetadataArgsStorage().tables.map((table) => table.target));
  return [...declared];
}

/**
 * The entities declare the schema the migrations build (docs/decisions.md, "Start-up"): on a
 * freshly migrated database, TypeORM's schema builder (what `synchronize` and
 * `migration:generate` run) finds nothing to change. An entity column no migration adds, an
 * index or CHECK a migration drops or renames while an entity declares it, or a migration
 * that changes a column's type, default or nullability without its entity, fails here, before
 * anyone generates a migration that drops data.
 */
describe('The entities and the migrated schema', () => {
  let medium: MediumDatabase;
  let entities: unknown[];

  beforeAll(async () => {
    entities = await entitiesOfSrc();
    medium = await openMediumDatabase({
      own: 'entityschema',
      entities: entities as (typeof MinerEntity)[],
    });
  });
  afterAll(() => medium.close());

  it('finds every entity under src', () => {
    expect(entities).toEqual(expect.arrayContaining([ApiKeyEntity, MinerEntity]));
    expect(medium.dataSource.entityMetadatas.map((metadata) => metadata.tableName).sort()).toEqual(
      entities.map((entity) => medium.dataSource.getMetadata(entity as never).tableName).sort(),
    );
  });

  it('leaves the schema builder nothing to do after the migrations: its log is empty', async () => {
    const log = await medium.dataSource.driver.createSchemaBuilder().log();
    expect(log.upQueries.map((query) => query.query)).toEqual([]);
  });

  // The miner index's columns are declared for the schema only: a `find` reads what it did
  // before they were, and nothing writes them through the entity.
  it("reads a miner through the entity without the miner index's columns", async () => {
    const miners = new MinersRepository(medium.dataSource, minerIndexOn(medium.dataSource).service);
    await miners.syncNeurons([metagraphNeuron(0)]);
    await medium.dataSource.query(
      'UPDATE miners SET index_buckets = 7, index_missed_syncs = 2, index_synced_at = now()',
    );
    const [miner] = await miners.listAll();
    expect(Object.keys(miner).sort()).toEqual(
      [
        'axonUrl',
        'coldkey',
        'credibility',
        'failingUntil',
        'hotkey',
        'incentive',
        'lastSeenAt',
        'stake',
        'state',
        'uid',
        'updatedAt',
        'validatorPermit',
      ].sort(),
    );
    const columns = medium.dataSource.getMetadata(MinerEntity).columns;
    const written = (of: 'isInsert' | 'isUpdate') =>
      columns.filter((column) => column[of]).map((column) => column.databaseName);
    for (const column of ['index_synced_at', 'index_buckets', 'index_missed_syncs']) {
      expect(written('isInsert')).not.toContain(column);
      expect(written('isUpdate')).not.toContain(column);
    }
  });
});
