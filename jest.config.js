/**
 * Tests run against a real Temporal dev server and real PostgreSQL, started once in
 * globalSetup (see test/setup/global-setup.ts). Files run one at a time: the 2-core
 * machines this runs on are shared by the dev server, PostgreSQL and the workers.
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 300000,
  maxWorkers: 1,
  verbose: true,
};
