/**
 * Unit specs live beside the code (src/**\/*.spec.ts); e2e specs in test/e2e drive the real
 * app over HTTP and WebSocket. The database is PostgreSQL when DATABASE_URL is set (a fresh
 * database per test file, cloned from a migrated template), the embedded PGlite otherwise.
 */
// Type errors are caught by `npm run typecheck`; the tests only transpile (isolatedModules in tsconfig).
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  maxWorkers: 2,
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
  ],
};
