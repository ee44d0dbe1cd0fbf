import type { Migration } from './migration';

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
  -- when it was checked: on the canary, at the end of a ramp stage, at the end of the run, or by verify
  stage         text NOT NULL CHECK (stage IN ('canary','ramp','final','verify')),
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

-- declared distributions (validate.distributions): the target column's shape before the run
-- wrote and at its end, kept for the report
CREATE TABLE backfill.distributions (
  run_id          text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  attempt         integer NOT NULL,
  stage           text NOT NULL CHECK (stage IN ('before','after')),
  column_name     text NOT NULL,
  rows            bigint NOT NULL,
  nulls           bigint NOT NULL,
  distinct_values bigint NOT NULL,
  mean            double precision,
  quantiles       double precision[],
  min_value       double precision,
  max_value       double precision,
  -- counts in equal-width buckets between the before capture's min and max
  histogram       jsonb,
  captured_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, attempt, stage, column_name)
);
-- temporary state (rate-limit rows) removed after verification and downstream succeeded
ALTER TABLE backfill.runs ADD COLUMN cleaned_at timestamptz;

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
