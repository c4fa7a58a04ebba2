import type { EmbeddedDatabase } from '../../src/database/embedded-postgres';

declare global {
  // Set by the global setup when the run had to start its own Postgres.
  var __EMBEDDED_POSTGRES__: EmbeddedDatabase | undefined;
  // Set by the global teardown: the setup's exit listener then has nothing left to clear.
  var __TEST_RUN_TORN_DOWN__: boolean | undefined;
}

export {};
