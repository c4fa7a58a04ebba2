import { config as loadDotEnv } from 'dotenv';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/load-config';
import { buildMigrationDataSourceOptions } from './src/database/data-source-options';

// The DataSource for the TypeORM CLI (`npm run migration:revert`), on migration settings (no
// statement timeout). `npm run migration:run` and the app migrate through migrateDatabase.
loadDotEnv();
const config = loadConfig();
if (!config.databaseUrl) throw new Error('DATABASE_URL must be set to run migrations from the CLI');

export default new DataSource(
  buildMigrationDataSourceOptions(config.databaseUrl, config.database.connectTimeoutMs),
);
