import type { Migration } from './migration';

/**
 * What else a run depends on, recorded when it is registered: the fingerprints of the tables
 * and functions a SQL transform reads (checked before each partition; an operator's acceptance
 * of a change replaces them, with an event), the PostgreSQL server's version and this engine's;
 * and, when it was started from a saved plan, that plan and who approved it; and whether it
 * re-ran only a spec's stale partitions; and the rows it planned to read, for progress.
 */
export const m0010InputsAndApproval: Migration = {
  version: 10,
  name: 'inputs-and-approval',
  sql: `
ALTER TABLE backfill.runs
  ADD COLUMN input_fingerprints jsonb,
  ADD COLUMN server_version     text,
  ADD COLUMN engine_version     text,
  ADD COLUMN approved_plan      jsonb,
  ADD COLUMN approved_by        text,
  -- start --only-stale: the run covers only the partitions that were stale when it started
  ADD COLUMN only_stale         boolean NOT NULL DEFAULT false,
  -- the rows in scope when the run registered (counted, or the planner's estimate): progress is rows read against it
  ADD COLUMN rows_planned       bigint,
  ADD COLUMN rows_planned_exact boolean;
`,
};
