import type { Migration } from './migration';

export const m0001Init: Migration = {
  version: 1,
  name: 'init',
  sql: `
CREATE TABLE backfill.runs (
  run_id            text PRIMARY KEY,
  name              text NOT NULL,
  workflow_id       text NOT NULL UNIQUE,
  reason            text NOT NULL,
  status            text NOT NULL CHECK (status IN ('pending','running','paused','cancelling','succeeded','failed','cancelled')),
  spec              jsonb NOT NULL,
  spec_file         text,
  spec_hash         text NOT NULL,
  transform_name    text NOT NULL,
  transform_version integer NOT NULL,
  transform_kind    text NOT NULL CHECK (transform_kind IN ('sql','module')),
  transform_hash    text NOT NULL,
  module_path       text,
  database_var      text NOT NULL,
  limits            jsonb NOT NULL,
  -- the control plane that running activities read before every chunk; written by the run workflow
  paused            boolean NOT NULL DEFAULT false,
  cancel_requested  boolean NOT NULL DEFAULT false,
  control_version   bigint NOT NULL DEFAULT 0,
  -- facts read from the catalog at registration (key type, output columns), so every worker builds the same SQL
  shape             jsonb NOT NULL,
  partitions_total  integer NOT NULL,
  started_by        text NOT NULL,
  last_error        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  finished_at       timestamptz,
  updated_at        timestamptz NOT NULL DEFAULT now()
);
-- one active run per spec name: the database, not a check-then-act race, refuses a second start
CREATE UNIQUE INDEX runs_one_active_per_name ON backfill.runs (name)
  WHERE status IN ('pending','running','paused','cancelling');

CREATE TABLE backfill.partitions (
  run_id          text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  partition_id    text NOT NULL,
  ordinal         integer NOT NULL,
  bounds          jsonb NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending','running','succeeded','failed','cancelled')),
  -- last committed source.key, as text; NULL until the first chunk commits
  cursor          text,
  rows_read       bigint NOT NULL DEFAULT 0,
  rows_written    bigint NOT NULL DEFAULT 0,
  rows_unchanged  bigint NOT NULL DEFAULT 0,
  chunks          integer NOT NULL DEFAULT 0,
  attempts        integer NOT NULL DEFAULT 0,
  completions     integer NOT NULL DEFAULT 0,
  last_error      text,
  error_range     text,
  started_at      timestamptz,
  finished_at     timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, partition_id),
  UNIQUE (run_id, ordinal)
);

CREATE TABLE backfill.run_events (
  id         bigserial PRIMARY KEY,
  run_id     text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  -- set by retried writers (activities) so a retry records an event once
  event_key  text,
  at         timestamptz NOT NULL DEFAULT now(),
  kind       text NOT NULL,
  actor      text,
  reason     text,
  detail     jsonb,
  UNIQUE (run_id, event_key)
);
CREATE INDEX run_events_by_run ON backfill.run_events (run_id, id);
`,
};
