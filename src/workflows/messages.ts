/**
 * Signals, queries and updates of the run workflow. Their descriptions show in the
 * Temporal Web UI, so operators can pause, resume, cancel and read progress there too.
 * An operator's pause, resume and cancel are updates (the CLI's): refused at once with the
 * reason when they do not apply, answered once the ledger holds them. The signals of the same
 * names stay for older clients, the Web UI's signal form and the engine's own pauses.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { LIMIT_BOUNDS } from '../domain/limits';
import type {
  CancelRequest,
  ControlOutcome,
  Limits,
  LimitsChange,
  OperatorAction,
  PartitionCondition,
  PauseRequest,
  PartitionReport,
  RunProgress,
} from '../domain/types';

export const pauseSignal = defineSignal<[PauseRequest?]>('pause');
export const resumeSignal = defineSignal<[OperatorAction?]>('resume');
export const cancelSignal = defineSignal<[OperatorAction?]>('cancel');
export const pauseUpdate = defineUpdate<ControlOutcome, [OperatorAction]>('pause');
export const resumeUpdate = defineUpdate<ControlOutcome, [OperatorAction]>('resume');
export const cancelUpdate = defineUpdate<ControlOutcome, [CancelRequest]>('cancel');
/** Sent by each partition workflow to its run, by workflow id only, so it reaches the newest run after continue-as-new. */
export const partitionFinishedSignal = defineSignal<[PartitionReport]>('partitionFinished');
/** A group's members that finished in their local attempts, reported together. */
export const partitionsFinishedSignal = defineSignal<[PartitionReport[]]>('partitionsFinished');
/** Sent by a partition's worker when the partition starts or stops being slowed or held, so progress and the Web UI say why. */
export const partitionConditionSignal = defineSignal<[PartitionCondition]>('partitionCondition');
export const progressQuery = defineQuery<RunProgress>('progress');
/** Returns the limits in force once running partitions can see them (written to the ledger). */
export const setLimitsUpdate = defineUpdate<Limits, [LimitsChange]>('setLimits');
/** Lets a run held by its canary expand; refused unless it is held. Returns once the ledger records it. */
export const approveUpdate = defineUpdate<void, [OperatorAction]>('approve');

export const HANDLER_DESCRIPTIONS = {
  pause: 'Pause the backfill: chunks in flight finish, no new chunk or partition starts. Args: {"actor": "...", "reason": "..."}',
  resume: 'Resume a paused backfill. Args: {"actor": "...", "reason": "..."}',
  cancel: 'Cancel the backfill: running partitions stop at their next chunk boundary; committed chunks stay. Args: {"actor": "...", "reason": "..."}',
  pauseUpdate:
    'Pause the backfill, refused with the reason when it does not apply (already paused, cancelling, finished); answers once running partitions can see it. Args: {"actor": "...", "reason": "..."}',
  resumeUpdate:
    'Resume a paused backfill, refused with the reason when it is not paused or is held by a gate (approve it instead). Args: {"actor": "...", "reason": "..."}',
  cancelUpdate:
    'Cancel the backfill, refused when it is already cancelling or finished; running partitions stop at their next chunk boundary. Args: {"actor": "...", "reason": "...", "thenTemporalCancel": true when the caller then cancels the workflow, so it ends Canceled}',
  approve: 'Let a run held by its canary (failed, or passed and waiting for approval) expand to the rest of its scope. Args: {"actor": "...", "reason": "..."}',
  partitionFinished: 'Internal: a partition workflow reports its outcome.',
  partitionsFinished: 'Internal: a group of small partitions reports the outcomes of several.',
  partitionCondition: 'Internal: a running partition is slowed or held by a guard, the window or a lock, or writes again.',
  progress: 'Partitions by status, rows of finished partitions, rate and ETA, and which partitions are slowed or held and why.',
  setLimits:
    `Change limits live: {"concurrency": ${LIMIT_BOUNDS.concurrency.min}-${LIMIT_BOUNDS.concurrency.max}, "chunkSize": ${LIMIT_BOUNDS.chunkSize.min}-${LIMIT_BOUNDS.chunkSize.max}, ` +
    '"rowsPerSecond": n or null, "window": {"start": "22:00", "end": "06:00", "timeZone": "UTC"} or null, "actor": "...", "reason": "..."}. Takes effect within one chunk.',
} as const;
