import type { Migration } from './migration';

/**
 * Fleets (docs/fleets.md): a member run names the fleet it belongs to, its member name (the
 * variable, never the URL) and its wave; each member's ledger keeps the fleet's own record —
 * who started it, from which fleet spec, its waves and every member, those excluded on purpose
 * and why — so the fleet can be read from any member after Temporal's retention. Who approved a
 * wave is kept with the runs of that wave.
 */
export const m0016Fleets: Migration = {
  version: 16,
  name: 'fleets',
  sql: `
CREATE TABLE backfill.fleets (
  fleet_id     text PRIMARY KEY,
  name         text NOT NULL,
  reason       text NOT NULL,
  workflow_id  text NOT NULL,
  fleet_hash   text NOT NULL,
  started_by   text NOT NULL,
  waves        int  NOT NULL,
  concurrency  int  NOT NULL,
  on_error     text NOT NULL CHECK (on_error IN ('stop', 'continue')),
  approve      boolean NOT NULL,
  -- [{ "variable": "US_DB", "wave": 1, "runId": "…", "identity": "…" }], in start order
  members      jsonb NOT NULL,
  -- [{ "variable": "EU_DB", "reason": "…" }]
  excluded     jsonb NOT NULL,
  approved_by  text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE backfill.runs
  ADD COLUMN fleet_id         text REFERENCES backfill.fleets (fleet_id),
  ADD COLUMN fleet_member     text,
  ADD COLUMN fleet_wave       int,
  ADD COLUMN wave_approved_by text;
CREATE INDEX runs_fleet ON backfill.runs (fleet_id) WHERE fleet_id IS NOT NULL;
`,
};
