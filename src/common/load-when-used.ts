import { createRequire } from 'node:module';

const requireFromHere = createRequire(__filename);

/**
 * Loads a package when it is first used rather than at start-up. Only for packages a process may
 * never need and that cost a lot to load: @polkadot/api (the chain client, only with
 * SUBTENSOR_URL) and @dsnp/parquetjs (only for a Parquet repository file or dataset) each add tens
 * of MB of resident memory to every process (`npm run bench:health` prints the idle RSS), and
 * pino-pretty is missing from production images. Import the package's types with `import type`.
 */
export function loadWhenUsed<T>(packageName: string): T {
  return requireFromHere(packageName) as T;
}
