/**
 * Three tiers. `unit`: pure code (test/unit), starts nothing, runs in seconds —
 * `npm run test:unit` while changing the SQL compiler, the governor or the run state.
 * `workflow`: the workflows on a dev server against a model ledger (test/workflow).
 * `integration`: everything that needs a real Temporal dev server and real PostgreSQL,
 * started once in its globalSetup (test/setup/global-setup.ts), which jest runs only when
 * a test of that project is selected. `npm test` runs all three, two files at a time; how an
 * integration file shares the machine (alone, or first) is said in the file
 * (test/helpers/turns.ts) and read by test/setup/take-turns.ts and test/setup/sequencer.js.
 */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  // the transform authors' entry as an installed package resolves it (examples/ import it by name)
  moduleNameMapper: { '^@pgbackfill/backfill/transform$': '<rootDir>/src/transform.ts' },
};

module.exports = {
  testTimeout: 300000,
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  verbose: true,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'workflow',
      testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
      globalSetup: '<rootDir>/test/setup/workflow-setup.ts',
      globalTeardown: '<rootDir>/test/setup/workflow-teardown.ts',
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/*.test.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      setupFilesAfterEnv: ['<rootDir>/test/setup/take-turns.ts'],
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
};
