import { config } from 'dotenv';

/**
 * Reads `.env` from the working directory into `process.env` (a variable already set wins), as
 * every entry point does before it reads its settings: the service, the migration command and
 * the TypeORM CLI's data source. Quiet: dotenv 17 and later print a line to stderr at every
 * load, `.env` or none, and the start's output is a contract (startup.e2e-spec; a dependency
 * drift audit).
 */
export function loadEnvFile(): void {
  config({ quiet: true });
}
