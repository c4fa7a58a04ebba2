// Three tiers (docs/decisions.md, "Test tiers"); `npm test` runs all of them.
//   unit    src/**/*.spec.ts: no Postgres, no Redis; a spec that opens a connection to either fails.
//   medium  test/medium/**/*.medium-spec.ts: a repository or service against a real Postgres, no HTTP.
//   e2e     test/e2e/**/*.e2e-spec.ts: the real app over HTTP on loopback.
// The medium and e2e projects share one fresh database per run, created (and migrated) by the
// global setup and dropped by the teardown. The hooks are set per project, not at the top
// level: jest runs a project's hook only when a test of that project is selected, and the same
// file named by two projects once (a set of paths), so a unit-only run never needs Postgres.
// swc (@swc/jest) compiles each file on its own, without types; `npm run check` type-checks
// (`npm test` runs it first). Its CommonJS exports are read-only: a spec that spies on a module's
// export mocks the module with a plain copy first (docs/decisions.md, "Test tiers").
// Every tier runs in test/support/test-environment.ts: jest's node environment, which also, when a
// spec file ends, closes the connections Node's fetch keeps alive, fails a file that leaves timers
// running, and lets the worker end without freeing its heap (else a worker can outlive its last
// file and be killed: "A worker process has failed to exit gracefully"); see also
// workerIdleMemoryLimit below.
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

// The compile tsconfig.json asks for (ES2022, legacy decorators with their metadata, class fields
// defined), without its type check. Chosen over ts-jest: a run with nothing cached took 127 CPU-s
// for the unit tier with ts-jest, 105 with swc, which matches ts-jest with everything cached.
const transform = [
  '@swc/jest',
  {
    swcrc: false,
    sourceMaps: 'inline',
    module: { type: 'commonjs' },
    jsc: {
      target: 'es2022',
      keepClassNames: true,
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    },
  },
];

// The recorded Bittensor data is read in place from ../shared/fixtures/bittensor (CI has it beside
// the checkout). Without it the run fails at once, naming the suites that read it (through these
// test/support modules), so that a CI without the data cannot pass on the rest alone. With
// ALLOW_MISSING_FIXTURES=1 they are skipped and named instead, as the data's own README asks of
// a machine that does not have it, and the rest run.
const FIXTURES = join(__dirname, '..', 'shared', 'fixtures', 'bittensor');
const FIXTURE_READERS = /bittensor-fixtures|chain-replay|chain-extrinsics/;

function suitesNeedingFixtures() {
  if (existsSync(FIXTURES)) return [];
  const suites = ['src', 'test', 'bench']
    .flatMap((dir) =>
      readdirSync(join(__dirname, dir), { recursive: true }).map((file) => join(dir, file)),
    )
    .filter((file) => /\.(spec|medium-spec|e2e-spec)\.ts$/.test(file))
    .filter((file) => FIXTURE_READERS.test(readFileSync(join(__dirname, file), 'utf8')));
  const listed = suites.map((file) => `  ${file}\n`).join('');
  if (process.env.ALLOW_MISSING_FIXTURES !== '1')
    throw new Error(
      `${FIXTURES} is missing, and these suites read it:\n${listed}` +
        'Check out shared/ beside the project, or run with ALLOW_MISSING_FIXTURES=1 to skip them.',
    );
  process.stderr.write(
    `\nSkipped (ALLOW_MISSING_FIXTURES=1): ${FIXTURES} is missing, so these suites, which read ` +
      `it, do not run:\n${listed}\n`,
  );
  return suites.map((file) => `<rootDir>/${file}`);
}
const testPathIgnorePatterns = ['/node_modules/', ...suitesNeedingFixtures()];

// Every spec runs inside a vm context, where each read of a global (Math, Number, …) from a
// module's code goes through the context's interceptor: @scure/base's base58 loop (SS58
// addresses; `Math.floor` and `Number.isSafeInteger` per digit) ran 23 times slower in jest than
// in the service, 1.3 ms an address. Jest binds these names in each module's wrapper instead
// (its documented remedy). Only built-ins that no test replaces (not Date or the timers, which
// fake timers swap after modules have loaded) and that no module the tests load declares again:
// a module's own top-level `const Buffer` beside a bound one fails to load with "SyntaxError:
// Identifier 'Buffer' has already been declared" (redis-parser has one). Two installed packages
// no test loads today would fail so (found by a review): readable-stream 4 (`const { Number,
// String, Uint8Array } = primordials`, under @zenfs/core, parquetjs's browser bundle) and
// @sinclair/typebox's syntax parser. A dependency that starts loading one: take the name out.
const sandboxInjectedGlobals = [
  'Math',
  'Number',
  'Array',
  'Object',
  'String',
  'JSON',
  'Uint8Array',
];

// 60 s a test in the medium and e2e tiers; jest ignores a project's own `testTimeout`.
const tierTimeout = '<rootDir>/test/support/tier-timeout.ts';

const withDatabase = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/** @type {import('jest').Config} */
module.exports = {
  // Three suites at a time, whatever the machine. Most of a suite's time is spent waiting on the
  // processes it starts (gateways, devnets, Postgres) or on a test's own timers: with two
  // workers a 2-CPU machine sat a third idle, and a third worker takes the e2e tier from 293 s
  // to 227 s there (a fourth gained 6 % more on every tier, and left too little room for a busy
  // machine). Suites that own global state take a database of their own and Redis keys under
  // their own prefix, so that they can run side by side (docs/decisions.md, "Test tiers").
  maxWorkers: 3,
  // A worker whose heap passed this after a spec file is replaced. Each spec file loads its own
  // copy of Nest, polkadot and the rest; a worker that ran half the unit tier ended near 800 MB,
  // and Node took over the 500 ms jest allows to free that much at exit ("A worker process has
  // failed to exit gracefully", every test passing; docs/decisions.md, "Test tiers"). Workers now
  // end without freeing their heap (test/support/worker-exit.ts); the bound stays for a run's
  // memory, and a smaller heap is less to collect.
  workerIdleMemoryLimit: '512MB',
  // How long jest waits for a worker told to end before it kills it ("A worker process has
  // failed to exit gracefully"): 500 ms by default. Ours end in 95–183 ms on a quiet machine
  // (test/support/worker-exit.ts), and once past 500 ms when the machine ran other tests beside
  // the run. A worker held by a leak is still killed, and the warning still printed, 2 s on; a
  // file's leftover timers fail the file itself (test/support/test-environment.ts).
  workerGracefulExitTimeout: 2000,
  testTimeout: 30000,
  // `npm run test:coverage` (unit and medium: the e2e tier runs most of the service as processes
  // of its own, whose coverage jest does not see). Every source file counts, loaded by a test or
  // not: a file no test reaches shows as 0 %, not as absent.
  collectCoverageFrom: ['src/**/*.ts', '!src/**/*.spec.ts', '!src/**/*.d.ts'],
  coverageReporters: ['text-summary', 'json-summary', 'html'],
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testEnvironment: '<rootDir>/test/support/test-environment.ts',
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/test/support/**/*.spec.ts',
        '<rootDir>/bench/**/*.spec.ts',
      ],
      setupFiles: ['<rootDir>/test/support/unit-guard.ts'],
      transform: { '^.+\\.ts$': transform },
      sandboxInjectedGlobals,
      testPathIgnorePatterns,
      setupFilesAfterEnv: ['<rootDir>/test/support/loopback-only.ts'],
    },
    {
      displayName: 'medium',
      rootDir: __dirname,
      testEnvironment: '<rootDir>/test/support/test-environment.ts',
      testMatch: ['<rootDir>/test/medium/**/*.medium-spec.ts'],
      transform: { '^.+\\.ts$': transform },
      sandboxInjectedGlobals,
      testPathIgnorePatterns,
      setupFilesAfterEnv: ['<rootDir>/test/support/loopback-only.ts', tierTimeout],
      ...withDatabase,
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testEnvironment: '<rootDir>/test/support/test-environment.ts',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      transform: { '^.+\\.ts$': transform },
      sandboxInjectedGlobals,
      testPathIgnorePatterns,
      setupFilesAfterEnv: ['<rootDir>/test/support/loopback-only.ts', tierTimeout],
      ...withDatabase,
    },
  ],
};
