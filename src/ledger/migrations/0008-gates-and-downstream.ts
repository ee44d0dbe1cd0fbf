import type { Migration } from './index';

/**
 * The proof a run gives before it may end succeeded, kept with the audit record: every gate
 * checked (canary, invariant, whole-run comparison), on which partition, with what result;
 * and what ran downstream afterwards (after-actions), each with its outcome and time.
 */
export const m0008GatesAndDownstream: Migration = {
  version: 8,
  name: 'gates-and-downstream',
  sql: `
CREATE TABLE backfill.gate_results (
  id            bigserial PRIMARY KEY,
  run_id        text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  attempt       integer NOT NULL,
  -- when it was checked: on the canary, or at the end of the run
  stage         text NOT NULL CHECK (stage IN ('canary','final','verify')),
  -- compare (the transform recomputed and compared with the target) or invariant:<name>
  gate          text NOT NULL,
  partition_id  text,
  passed        boolean NOT NULL,
  rows_checked  bigint NOT NULL DEFAULT 0,
  violations    bigint NOT NULL DEFAULT 0,
  -- row data (keys, values) stays here, never in Temporal
  examples      text,
  checked_at    timestamptz NOT NULL DEFAULT now(),
  duration_ms   integer NOT NULL DEFAULT 0
);
-- a retried check overwrites its own result instead of adding another
CREATE UNIQUE INDEX gate_results_once ON backfill.gate_results (run_id, attempt, stage, gate, (coalesce(partition_id, '')));

-- after-actions: NULL when the spec has none or they have not run yet
ALTER TABLE backfill.runs ADD COLUMN downstream text CHECK (downstream IN ('pending','succeeded','failed','skipped'));

CREATE TABLE backfill.after_actions (
  run_id       text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  position     integer NOT NULL,
  action       text NOT NULL,
  description  text NOT NULL,
  status       text NOT NULL CHECK (status IN ('pending','succeeded','failed')),
  tries        integer NOT NULL DEFAULT 0,
  last_error   text,
  started_at   timestamptz,
  finished_at  timestamptz,
  PRIMARY KEY (run_id, position)
);
`,
};
