import { config as loadDotEnv } from 'dotenv';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/load-config';
import { buildDataSourceOptions } from './src/database/data-source-options';

// The DataSource for the TypeORM CLI (`npm run migration:run`); the app migrates itself at start.
loadDotEnv();
const config = loadConfig();
if (!config.databaseUrl) throw new Error('DATABASE_URL must be set to run migrations from the CLI');

export default new DataSource(buildDataSourceOptions(config.databaseUrl, config.database));
