/**
 * Run and partition statuses, and the transitions the ledger allows between them.
 * Workflow-safe plain data: imported by workflows, activities and the CLI alike.
 * Invariant: every status change the ledger writes is an arrow in one of these tables.
 */

export const RunStatus = {
  /** Registered in the ledger; partitions planned; no partition has started yet. */
  Pending: 'pending',
  /** Partitions are being processed. */
  Running: 'running',
  /** An operator paused it: in-flight chunks finish, no new chunk or partition starts. */
  Paused: 'paused',
  /** An operator asked to cancel; running partitions stop at their next chunk boundary. */
  Cancelling: 'cancelling',
  /** Every partition succeeded. */
  Succeeded: 'succeeded',
  /** Finished, but at least one partition failed. */
  Failed: 'failed',
  /** Finished after a cancel; committed chunks stay committed. */
  Cancelled: 'cancelled',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Statuses in which a run still holds its name: a second run of the same spec is refused. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = [RunStatus.Pending, RunStatus.Running, RunStatus.Paused, RunStatus.Cancelling];

export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  // the first partition starts, or an operator pauses/cancels before it does
  pending: ['running', 'paused', 'cancelling', 'failed'],
  // pause / cancel from an operator; finishing when the last partition reports
  running: ['paused', 'cancelling', 'succeeded', 'failed'],
  // resume; cancelling a paused run is allowed and does not need a resume first
  paused: ['running', 'cancelling'],
  // the last running partition stopped at a chunk boundary
  cancelling: ['cancelled', 'failed'],
  // a succeeded run is final: running it again is a new run with a new id
  succeeded: [],
  // retry-failed: a new attempt of the same run re-runs only its failed and cancelled partitions
  failed: ['running'],
  cancelled: ['running'],
};

export const PartitionStatus = {
  /** Planned; no chunk has run. */
  Pending: 'pending',
  /** A worker is (or was, before it died) moving its cursor; the cursor in the ledger is the truth. */
  Running: 'running',
  /** Every chunk committed and the partition checks passed. */
  Succeeded: 'succeeded',
  /** A data error or exhausted retries; the error and chunk key range are recorded. */
  Failed: 'failed',
  /** Stopped at a chunk boundary by a cancel; committed chunks stay. */
  Cancelled: 'cancelled',
  /** A revert run put back what it wrote, from its before-images (docs/undo.md); final. */
  Reverted: 'reverted',
} as const;
export type PartitionStatus = (typeof PartitionStatus)[keyof typeof PartitionStatus];

export const PARTITION_TRANSITIONS: Readonly<Record<PartitionStatus, readonly PartitionStatus[]>> = {
  // a worker picks it up; the run is cancelled before it starts; or it fails before its first
  // chunk (the worker refuses a changed transform, or its workflow was terminated before it ran)
  pending: ['running', 'cancelled', 'failed'],
  // a restarted worker re-enters running from its own checkpoint (running -> running)
  running: ['running', 'succeeded', 'failed', 'cancelled'],
  // a revert run restored what it wrote (a failed or cancelled one may have written some chunks)
  succeeded: ['reverted'],
  // retry-failed puts them back in the plan; they resume from their checkpoint
  failed: ['pending', 'running', 'reverted'],
  cancelled: ['pending', 'running', 'reverted'],
  reverted: [],
};

/** A partition in one of these statuses has ended: it leaves the run's in-flight set and counts as done. */
export const FINISHED_PARTITION_STATUSES: readonly PartitionStatus[] = [PartitionStatus.Succeeded, PartitionStatus.Failed, PartitionStatus.Cancelled];

/** A run in one of these statuses has ended; failed and cancelled ones may still be retried. */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = [RunStatus.Succeeded, RunStatus.Failed, RunStatus.Cancelled];

/** Finished runs that retry-failed may start again: the finished statuses with an arrow back to running. */
export const RETRYABLE_RUN_STATUSES: readonly RunStatus[] = FINISHED_RUN_STATUSES.filter((s) => RUN_TRANSITIONS[s].includes(RunStatus.Running));

export function canTransition<S extends string>(table: Readonly<Record<S, readonly S[]>>, from: S, to: S): boolean {
  return table[from].includes(to);
}

/** The statuses from which `to` may be entered: what a ledger UPDATE into `to` may match. */
export function allowedFrom<S extends string>(table: Readonly<Record<S, readonly S[]>>, to: S): S[] {
  return (Object.keys(table) as S[]).filter((from) => table[from].includes(to));
}
