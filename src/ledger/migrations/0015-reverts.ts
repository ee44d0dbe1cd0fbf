import type { Migration } from './migration';

/**
 * Reverts (docs/undo.md): a revert run names the run it undoes, and each partition it restores
 * is marked `reverted` in that run — an arrow of the transition tables like every other status
 * change. Rows a revert left alone because someone changed them after the run are its
 * conflicts: their keys are row data, kept here only (never in Temporal), for status and the report.
 */
export const m0015Reverts: Migration = {
  version: 15,
  name: 'reverts',
  sql: `
ALTER TABLE backfill.runs ADD COLUMN reverts text REFERENCES backfill.runs (run_id);
CREATE INDEX runs_reverts ON backfill.runs (reverts) WHERE reverts IS NOT NULL;
ALTER TABLE backfill.partitions DROP CONSTRAINT partitions_status_check;
ALTER TABLE backfill.partitions ADD CONSTRAINT partitions_status_check CHECK (status IN ('pending','running','succeeded','failed','cancelled','reverted'));
ALTER TABLE backfill.partitions ADD COLUMN reverted_by text;
CREATE TABLE backfill.revert_conflicts (
  run_id        text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  partition_id  text NOT NULL,
  key           text NOT NULL,
  change        text NOT NULL CHECK (change IN ('updated', 'inserted', 'deleted')),
  found_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, partition_id, key)
);
`,
};
