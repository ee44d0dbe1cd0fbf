import type { Migration } from './migration';

/**
 * Two active runs writing one target table would interleave their chunks, and the target
 * would hold whichever wrote last, row by row. The target is recorded resolved (schema and
 * table, as the database names it), so `orders_usd` and `public.orders_usd` are one target;
 * the index refuses a second active run on it whatever the runs are called. The run also
 * records the identity of the database it was planned against.
 */
export const m0007OneActiveRunPerTarget: Migration = {
  version: 7,
  name: 'one-active-run-per-target',
  sql: `
ALTER TABLE backfill.runs ADD COLUMN target_relation text;
-- the database the run was planned against (src/db/identity.ts); workers elsewhere refuse its work
ALTER TABLE backfill.runs ADD COLUMN database_identity text;
-- chunks rolled back and recomputed because the application changed their rows meanwhile
ALTER TABLE backfill.partitions ADD COLUMN concurrent_retries integer NOT NULL DEFAULT 0;
-- source rows in scope at the end of the run that no planned partition covered (arrived after
-- planning); NULL when not measured
ALTER TABLE backfill.runs ADD COLUMN rows_outside_plan bigint;
-- output rows update mode did not write because the target has no row with their key
ALTER TABLE backfill.partitions ADD COLUMN rows_skipped bigint NOT NULL DEFAULT 0;
ALTER TABLE backfill.chunks ADD COLUMN rows_skipped bigint NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX runs_one_active_per_target ON backfill.runs (target_relation)
  WHERE status IN ('pending','running','paused','cancelling');
`,
};
