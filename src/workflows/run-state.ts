/**
 * The run workflow's state and the partitions' side of it, as plain functions: reports and
 * conditions, launches, the plan's progress. The operator's side (pause, resume, cancel, limits,
 * ledger syncs) is control-state.ts; the progress view of it is progress.ts. No Temporal API here, and the time and ids come in as
 * arguments, so each function is replay-safe and unit-tested over tables of cases.
 * The state is carried across continue-as-new: its fields only ever grow, optional.
 */
import { GROUP_SIZE, smallOnAverage, startsInGroups } from '../domain/partition-average';
import { FINISHED_PARTITION_STATUSES, type RunStatus } from '../domain/statuses';
import type { NotifyTarget } from '../specs/notify-schema';
import type { CanaryProgress, Limits, OperatorAction, PartitionCondition, PartitionReport, RowCounts, RunProgress, WorkerGap } from '../domain/types';

/** An operator action waiting to be written to the ledger's run_events; `key` makes the write idempotent. */
export interface ControlEvent extends OperatorAction {
  key: string;
  kind: 'paused' | 'resumed' | 'cancel-requested' | 'limits-changed' | 'canary-passed' | 'canary-failed' | 'stage-passed' | 'stage-failed' | 'approved';
  detail?: Record<string, unknown>;
}

export interface RunState {
  partitionsTotal: number;
  /** The rows the plan counted or estimated, when the opening said (how big its partitions are on average). */
  rowsPlanned?: number;
  nextOrdinal: number;
  inFlight: string[];
  counts: { succeeded: number; failed: number; cancelled: number };
  finished: RowCounts;
  paused: boolean;
  cancelRequested: boolean;
  cancelledByTemporal: boolean;
  /**
   * An operator's cancel that Temporal's own cancellation follows (`backfill cancel`), so the
   * execution ends Canceled; absent in state carried from before it existed.
   */
  awaitingTemporalCancel?: boolean;
  limits: Limits;
  /** Grows with every operator decision; the ledger accepts only a newer version. */
  controlVersion: number;
  /** The newest version the ledger holds. */
  syncedVersion: number;
  pendingEvents: ControlEvent[];
  status: RunStatus;
  startedAt: string;
  continuedAsNew: number;
  heldBy?: OperatorAction;
  lastError?: string;
  /** Running partitions that are slowed or held, by partition id; absent in state carried from before it existed. */
  conditions?: Record<string, PartitionCondition>;
  /** The canary and how far it got; `launched` counts its partitions started. */
  canary?: CanaryProgress & { launched: number };
  /** Ramp stages (validate.ramp): the plan's ordinals are released a stage at a time, each checked before the next. */
  ramp?: RampState;
  finalCheck?: RunProgress['finalCheck'];
  /** Set while no worker serves the run's database queue (run/worker-watch.ts); absent in state from before routing. */
  workerGap?: WorkerGap;
  /**
   * Finished partitions' reports that came before the run had them in flight: a workflow task
   * that launched them was lost with its worker, and their reports reached the run before the
   * task ran again. Each settles its partition when it is launched again (`nowInFlight`).
   */
  early?: PartitionReport[];
  /** Partitions in flight that run in a group's workflow, by partition id: the workflow reconciliation asks about. */
  groups?: Record<string, string>;
}

/**
 * How reports count under the patch `reports-before-launch` (executions before it have none:
 * reports of partitions not in flight are dropped, whatever their attempt).
 */
export interface ReportRules {
  /** The run's attempt: a report from a partition of another attempt (its run_attempt) is stale. */
  attempt: number;
}

/** More than one lost workflow task can have launched: duplicates of finished partitions age out. */
const EARLY_REPORTS_KEPT = 64;

export interface RampState {
  /** Exclusive ordinal bound of each stage, ascending; the last stage (the rest of the plan) is not listed. */
  cutoffs: number[];
  /** Index of the stage running now; cutoffs.length once every checked stage passed. */
  stage: number;
  phase: 'running' | 'held';
  held?: string;
}

/** What checkCanary / checkFinal found (no row data). */
export interface GateVerdictLike {
  passed: boolean;
  failures: string[];
  failureCount: number;
  partitionsChecked: number;
  /** The check itself could not complete (the reason is the one failure). */
  incomplete?: boolean;
}

/** What registerRun (a first attempt) and startRunAttempt (retry-failed) both return. */
export interface RunOpening {
  partitionsTotal: number;
  /** The rows the plan counted or estimated (the ledger's rows_planned), when it has them. */
  rowsPlanned?: number;
  /** The first page of the plan still to run, so partitions start without another round trip. */
  firstPage: { id: string; ordinal: number }[];
  /** Partitions that succeeded in earlier attempts, and their rows (0 on a first attempt). */
  succeeded?: number;
  finished?: RowCounts;
  /** The ledger's control version (0 on a first attempt). */
  controlVersion?: number;
  /** The registering worker's BACKFILL_NOTIFY: who is told when the spec's `notify:` names no one. */
  notify?: NotifyTarget[];
}

export function initialRunState(limits: Limits, startedAt: string): RunState {
  return {
    partitionsTotal: 0,
    nextOrdinal: 0,
    inFlight: [],
    counts: { succeeded: 0, failed: 0, cancelled: 0 },
    finished: { rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0 },
    paused: false,
    cancelRequested: false,
    cancelledByTemporal: false,
    limits,
    controlVersion: 0,
    syncedVersion: 0,
    pendingEvents: [],
    status: 'pending',
    startedAt,
    continuedAsNew: 0,
    conditions: {},
  };
}

/** The run is registered (or its retry attempt started): it runs. */
export function opened(s: RunState, opening: RunOpening, retry: boolean): RunState {
  const next: RunState = {
    ...s,
    partitionsTotal: opening.partitionsTotal,
    ...(opening.rowsPlanned !== undefined ? { rowsPlanned: opening.rowsPlanned } : {}),
    status: 'running',
  };
  if (!retry) return next;
  const ledgerVersion = opening.controlVersion ?? 0;
  return {
    ...next,
    counts: { ...s.counts, succeeded: opening.succeeded ?? 0 },
    finished: opening.finished ?? s.finished,
    // the ledger's control version only grows: continue from it, or our writes would be refused
    // as stale; decisions taken while the attempt was starting stay ahead of it
    controlVersion: ledgerVersion + s.controlVersion,
    syncedVersion: ledgerVersion,
  };
}

/**
 * A partition's outcome, from its own signal or from reconciliation; a second report for the same
 * partition is ignored. Under `rules`, a report of another attempt is ignored, and one of a
 * partition not in flight is kept for its launch (a second report of a finished one ages out).
 */
export function applyReport(s: RunState, report: PartitionReport, rules?: ReportRules): RunState {
  if (rules && report.runAttempt !== undefined && report.runAttempt !== rules.attempt) return s;
  if (!s.inFlight.includes(report.partitionId)) {
    // a duplicate, or a partition this run did not start (yet)
    if (!rules || !FINISHED_PARTITION_STATUSES.includes(report.status)) return s;
    return { ...s, early: [...(s.early ?? []).filter((r) => r.partitionId !== report.partitionId), report].slice(-EARLY_REPORTS_KEPT) };
  }
  const conditions = { ...(s.conditions ?? {}) };
  delete conditions[report.partitionId];
  const finishedStatus = FINISHED_PARTITION_STATUSES.includes(report.status);
  return {
    ...withoutGroup(s, report.partitionId),
    inFlight: s.inFlight.filter((id) => id !== report.partitionId),
    conditions,
    counts: finishedStatus ? { ...s.counts, [report.status]: s.counts[report.status as keyof RunState['counts']] + 1 } : s.counts,
    finished: {
      rowsRead: s.finished.rowsRead + report.rowsRead,
      rowsWritten: s.finished.rowsWritten + report.rowsWritten,
      rowsUnchanged: s.finished.rowsUnchanged + report.rowsUnchanged,
    },
    lastError: report.status === 'failed' ? (report.error ?? `partition ${report.partitionId} failed`) : s.lastError,
  };
}

/** Why a running partition is slow; a late report from a partition no longer in flight (or a zombie attempt) is ignored. */
export function applyCondition(s: RunState, c: PartitionCondition): RunState {
  if (!s.inFlight.includes(c.partitionId)) return s;
  const conditions = { ...(s.conditions ?? {}) };
  if (c.state === 'writing') delete conditions[c.partitionId];
  else conditions[c.partitionId] = c;
  return { ...s, conditions };
}

/** In flight before its start resolves: a fast child may report in the same activation. */
export function launched(s: RunState, partition: { id: string; ordinal: number }): RunState {
  return nowInFlight({ ...s, nextOrdinal: partition.ordinal + 1 }, partition.id);
}

/** In flight; a report of it that came early (`early`) settles it at once, and it needs no start. */
export function nowInFlight(s: RunState, partitionId: string): RunState {
  const withIt = { ...s, inFlight: [...s.inFlight, partitionId] };
  const early = s.early?.find((r) => r.partitionId === partitionId);
  return early ? applyReport({ ...withIt, early: s.early!.filter((r) => r !== early) }, early) : withIt;
}

/** Passed over without a launch (the canary ran it): the plan moves on as if it had been launched. */
export function passedOver(s: RunState, partition: { id: string; ordinal: number }): RunState {
  return { ...s, nextOrdinal: partition.ordinal + 1 };
}

/** Its start failed for good: no longer in flight. */
export function launchFailed(s: RunState, partitionId: string): RunState {
  return { ...withoutGroup(s, partitionId), inFlight: s.inFlight.filter((id) => id !== partitionId) };
}

/** These partitions, launched and still in flight, run in the group workflow `workflowId`. */
export function groupLaunched(s: RunState, partitionIds: readonly string[], workflowId: string): RunState {
  return { ...s, groups: { ...(s.groups ?? {}), ...Object.fromEntries(partitionIds.map((id) => [id, workflowId])) } };
}

function withoutGroup(s: RunState, partitionId: string): RunState {
  if (!s.groups?.[partitionId]) return s;
  const groups = { ...s.groups };
  delete groups[partitionId];
  return { ...s, groups };
}

/** What the execution allows: groups need the local first attempt, which partitions started on their own and a SQL transform have. */
export interface GroupingAllowed {
  /** The execution passed the patch `partition-groups` (executions recorded before it never grouped), and no bench asked for partitions alone. */
  groups: boolean;
  /** Partitions start as workflows of their own, with a local first attempt (patch `partitions-started-alone`). */
  startsAlone: boolean;
  /** The transform is SQL; a module's runs in the worker's module host, not in a local attempt. */
  sqlTransform: boolean;
}

/**
 * Small partitions of a run of many go in groups of up to GROUP_SIZE, a workflow each: their
 * orchestration, a workflow and a report per partition, is most of their time (README, "Small
 * partitions in groups"). `free`: the slots the window may fill now.
 */
export function groupSize(s: RunState, free: number, allowed: GroupingAllowed): number {
  if (!allowed.groups || !allowed.startsAlone || !allowed.sqlTransform) return 1;
  if (!startsInGroups(s.rowsPlanned, s.partitionsTotal, s.limits.chunkSize)) return 1;
  return Math.max(1, Math.min(GROUP_SIZE, free));
}

export function canLaunch(s: RunState, planLeft: boolean): boolean {
  return !s.paused && !s.cancelRequested && s.inFlight.length < s.limits.concurrency && planLeft;
}

/** Nothing in flight, and nothing more to start: the plan is done, or the run is cancelling. */
export function isFinished(s: RunState, planLeft: boolean): boolean {
  return s.inFlight.length === 0 && (s.cancelRequested || !planLeft);
}

/** The status operators see: paused is a flag in the ledger, a status in the Web UI. */
export function shownStatus(s: RunState): RunStatus {
  return s.paused && !s.cancelRequested ? 'paused' : s.status;
}

/** What the last look at the run's database queue found: a gap (no worker serves it), or none. */
export function workerGapSeen(s: RunState, gap: WorkerGap | undefined): RunState {
  if (!gap) {
    if (!s.workerGap) return s;
    const { workerGap: _gone, ...rest } = s;
    return rest;
  }
  return { ...s, workerGap: gap };
}

/**
 * Partitions of a chunk or two on average: small enough that a first attempt as a local activity
 * usually finishes them (backfill-partition.ts). Larger ones start as activities, as a local
 * attempt would hand them over at once, a hop for nothing.
 */
export function smallPartitions(s: RunState): boolean {
  return smallOnAverage(s.rowsPlanned, s.partitionsTotal, s.limits.chunkSize);
}
