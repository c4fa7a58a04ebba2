import { config as loadDotEnv } from 'dotenv';
import { DataSource } from 'typeorm';
import { buildMigrationDataSourceOptions } from './src/database/data-source-options';
import { commandLineDatabase } from './src/database/migrate-command';

// The DataSource for the TypeORM CLI (`npm run migration:revert`), on migration settings (no
// statement timeout). `npm run migration:run` and the app migrate through migrateDatabase.
// quiet: dotenv 17 and later print a line to stderr at every load (as gateway.ts says).
loadDotEnv({ quiet: true });
const { url, connectTimeoutMs } = commandLineDatabase(process.env);

export default new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs));
