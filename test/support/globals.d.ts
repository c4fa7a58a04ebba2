import type { EmbeddedDatabase } from '../../src/database/embedded-postgres';
import type { TestRun } from './abandoned-runs';

declare global {
  // Set by the global setup when the run had to start its own Postgres.
  var __EMBEDDED_POSTGRES__: EmbeddedDatabase | undefined;
  // The run the global setup made, for its teardown and for its exit listener should jest exit
  // without the teardown; `tornDown` once the teardown has cleared it.
  var __TEST_RUN__: TestRun | undefined;
}

export {};
