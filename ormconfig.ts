import { DataSource } from 'typeorm';
import { buildMigrationDataSourceOptions } from './src/database/data-source-options';
import { commandLineDatabase } from './src/database/migrate-command';
import { loadEnvFile } from './src/config/env-file';

// The DataSource for the TypeORM CLI (`npm run migration:revert`), on migration settings (no
// statement timeout). `npm run migration:run` and the app migrate through migrateDatabase.
loadEnvFile();
const { url, connectTimeoutMs } = commandLineDatabase(process.env);

export default new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs));
