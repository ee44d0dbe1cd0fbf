import type { Migration } from './migration';

/**
 * A partition split while it ran (`limits.splitTail`) names the partition it was cut from: the
 * run's completeness proof folds each split back into its planned partition, and the report
 * shows which partitions the plan had and which the run added.
 */
export const m0013PartitionSplits: Migration = {
  version: 13,
  name: 'partition-splits',
  sql: `
ALTER TABLE backfill.partitions ADD COLUMN split_from text;
`,
};
