import { DataSourceOptions } from 'typeorm';
import { DatabaseTuning } from '../config/app-config';
import { ApiKeyEntity } from '../modules/api-keys/api-key.entity';
import { MinerEntity } from '../network/miner.entity';
import { InitialSchema1763700000000 } from './migrations/1763700000000-InitialSchema';
import { RepoNames1763800000000 } from './migrations/1763800000000-RepoNames';
import { MinerIndex1763900000000 } from './migrations/1763900000000-MinerIndex';
import { ScrapingTasks1764000000000 } from './migrations/1764000000000-ScrapingTasks';
import { MinerLabelArrays1764150000000 } from './migrations/1764150000000-MinerLabelArrays';

export const ENTITIES = [ApiKeyEntity, MinerEntity];
export const MIGRATIONS = [
  InitialSchema1763700000000,
  RepoNames1763800000000,
  MinerIndex1763900000000,
  ScrapingTasks1764000000000,
  MinerLabelArrays1764150000000,
];

/**
 * The one place that describes how we talk to Postgres, shared by the app, the TypeORM CLI
 * (ormconfig.ts) and the test setup. Migrations are explicit; `synchronize` stays off.
 */
export function buildDataSourceOptions(
  url: string,
  tuning?: Partial<DatabaseTuning>,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    // Failed queries surface as exceptions, logged by whoever handles them (as JSON via pino).
    logging: false,
    extra: {
      max: tuning?.poolSize ?? 10,
      connectionTimeoutMillis: tuning?.connectTimeoutMs ?? 5000,
      statement_timeout: tuning?.statementTimeoutMs ?? 15000,
      // Fail fast instead of queueing forever when the pool is exhausted or Postgres is gone.
      idle_in_transaction_session_timeout: 60000,
      application_name: 'validator-gateway',
    },
  };
}
