import type { Migration } from './migration';

/** retry-failed: a run may be attempted again; each attempt re-runs only failed and cancelled partitions. */
export const m0002RunAttempts: Migration = {
  version: 2,
  name: 'run-attempts',
  sql: `
ALTER TABLE backfill.runs ADD COLUMN attempt integer NOT NULL DEFAULT 1;
ALTER TABLE backfill.partitions ADD COLUMN run_attempt integer NOT NULL DEFAULT 1;
COMMENT ON COLUMN backfill.partitions.run_attempt IS 'the run attempt that last put this partition in the plan';
`,
};
