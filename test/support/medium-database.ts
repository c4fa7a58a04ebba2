import { DataSource, DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { runMigrations } from '../../src/database/migrate';
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
 * `entities`: those a repository under test uses through TypeORM (the modules register them in
 * the app; the options list none).
 */
export async function openMediumDatabase(
  options: { own?: string; entities?: DataSourceOptions['entities'] } = {},
): Promise<MediumDatabase> {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const own = options.own === undefined ? undefined : scratchDatabaseName(options.own);
  const url = own ? await createDatabase(serverUrl, own) : testDatabaseUrl();
  const dataSource = new DataSource({
    ...buildDataSourceOptions(url, { poolSize: 4 }),
    entities: options.entities ?? [],
  });
  await dataSource.initialize();
  if (own) await runMigrations(dataSource);
  return {
    dataSource,
    close: async () => {
      await dataSource.destroy();
      if (own) await dropDatabase(serverUrl, own);
    },
  };
}
