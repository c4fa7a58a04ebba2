import { DataSource, DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { migrateDatabase } from '../../src/database/migrate';
import { createDatabase, dropDatabase, scratchDatabaseName, testDatabaseUrl } from './database';

/** A connection for a medium spec: repositories and services take `dataSource` directly. */
export interface MediumDatabase {
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * Connects a medium spec to Postgres without the app: the run's shared database, or with
 * `own` a fresh, migrated one of its own (for a spec that owns global state, such as the
 * miners table or the network totals), dropped on close (and by the teardown if it fails).
 * Modules register their entities in the app; a spec names those its repositories use.
 */
export async function openMediumDatabase(
  options: {
    own?: string;
    /** With `own`: CREATE DATABASE's settings after the name (createDatabase). */
    settings?: string;
    entities?: DataSourceOptions['entities'];
  } = {},
): Promise<MediumDatabase> {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const own = options.own === undefined ? undefined : scratchDatabaseName(options.own);
  const url = own ? await createDatabase(serverUrl, own, options.settings) : testDatabaseUrl();
  if (own) await migrateDatabase(url);
  const dataSource = new DataSource({
    ...buildDataSourceOptions(url, { poolSize: 4 }),
    entities: options.entities ?? [],
  });
  await dataSource.initialize();
  return {
    dataSource,
    close: async () => {
      await dataSource.destroy();
      if (own) await dropDatabase(serverUrl, own);
    },
  };
}
