// The medium and e2e tiers' timeout for a test or hook: 60 s, where the unit tier keeps the
// run's 30 s. Set here, not as the projects' `testTimeout`: jest-circus reads only the run's
// (global) `testTimeout` and ignores a project's, so the 60 s once written in jest.config.js
// never applied, and long e2e tests failed at 30 s on a loaded machine (vote-publication's,
// at 30 s exactly). `test/support/timeout-in-effect.ts` reads what applies.
jest.setTimeout(60_000);
