import type { EmbeddedDatabase } from '../../src/database/embedded-postgres';

declare global {
  // Set by the global setup when the run had to start its own Postgres.
  var __EMBEDDED_POSTGRES__: EmbeddedDatabase | undefined;
}

export {};
