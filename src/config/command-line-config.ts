import { AppConfig } from './app-config';
import { loadConfig } from './load-config';

/**
 * The settings of a command an operator runs beside the service (the migrations, an author's
 * erasure): read as the service reads them, but for what production requires of the service
 * alone (MASTER_KEY, a metagraph source), which refused a migration that needs the database only
 * (an operator audit). Malformed values still are.
 */
export function commandLineConfig(env: NodeJS.ProcessEnv): AppConfig {
  return loadConfig({ ...env, NODE_ENV: 'development' });
}
