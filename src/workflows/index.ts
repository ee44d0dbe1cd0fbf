/** The workflow bundle's entry: everything the worker registers. */
export { backfillRunWorkflow } from './backfill-run';
export { backfillPartitionWorkflow, backfillPartitionGroupWorkflow } from './backfill-partition';
export { backfillFleetWorkflow } from './backfill-fleet';
export { backfillNotifyWorkflow } from './backfill-notify';
