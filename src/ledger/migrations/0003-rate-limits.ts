import type { Migration } from './migration';

/**
 * The run's rows/second budget, shared by every worker: one token bucket row per run,
 * refilled from the database clock, so workers on different hosts agree on time.
 */
export const m0003RateLimits: Migration = {
  version: 3,
  name: 'rate-limits',
  sql: `
CREATE TABLE backfill.rate_limits (
  run_id       text PRIMARY KEY REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  -- may go negative: a reservation beyond the bucket is a debt its caller waits out
  tokens       double precision NOT NULL,
  refreshed_at timestamptz NOT NULL
);
`,
};
