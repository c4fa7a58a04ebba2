import { DataSource } from 'typeorm';
import { buildMigrationDataSourceOptions } from './src/database/data-source-options';
import { commandLineDatabase } from './src/database/migrate-command';
import { loadEnvFile } from './src/config/env-file';

// The DataSource for the TypeORM CLI (`npx typeorm migration:show -d dist/ormconfig.js`), on
// migration settings (no statement timeout). The app, `npm run migration:run` and
// `npm run migration:revert` migrate through migrate.ts, under the replicas' migration lock.
loadEnvFile();
const { url, connectTimeoutMs } = commandLineDatabase(process.env);

export default new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs));
