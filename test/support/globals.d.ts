import type { EmbeddedDatabase } from '../../src/database/embedded-postgres';

declare global {
  // Set by the global setup when the run had to start its own Postgres.
  var __EMBEDDED_POSTGRES__: EmbeddedDatabase | undefined;
  // The run the global setup made, for its teardown and for its exit listener should jest exit
  // without the teardown; `tornDown` once the teardown has cleared it.
  var __TEST_RUN__:
    | { serverUrl: string; name: string; temp: string; embedded: boolean; tornDown: boolean }
    | undefined;
}

export {};
