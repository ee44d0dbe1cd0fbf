import type { Migration } from './migration';

/**
 * The workflow that ran a partition's latest attempt: its own (`<run>/<partition>`), or the
 * group's that ran it with other small partitions (`<run>/group/…`). `report --serve` links each
 * partition there; absent for attempts before this column.
 */
export const m0019PartitionWorkflows: Migration = {
  version: 19,
  name: 'partition-workflows',
  sql: `
ALTER TABLE backfill.partitions ADD COLUMN workflow_id text;
`,
};
