// One `npm test` runs both projects. The e2e project shares one fresh database per run,
// created (and migrated) by the global setup and dropped by the teardown.
// tsconfig.jest.json sets isolatedModules: ts-jest only transpiles; `npm run check` type-checks.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.jest.json' }];

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  // The global setup/teardown are TypeScript too.
  transform: { '^.+\\.ts$': tsJest },
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      testTimeout: 60000,
    },
  ],
};
