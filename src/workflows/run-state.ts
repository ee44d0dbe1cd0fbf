/**
 * The run workflow's state and every change to it, as plain functions: operator actions
 * (pause, resume, cancel, new limits), partition reports and conditions, launches, ledger
 * syncs (the progress view of it is progress.ts). No Temporal API here, and the time and ids come in as
 * arguments, so each function is replay-safe and unit-tested over tables of cases.
 * The state is carried across continue-as-new: its fields only ever grow, optional.
 */
import { rowsPerPartition } from '../domain/partition-average';
import { applyLimitsChange, limitsChangeProblem } from '../domain/limits';
import { FINISHED_PARTITION_STATUSES, FINISHED_RUN_STATUSES, type RunStatus } from '../domain/statuses';
import type { NotifyTarget } from '../specs/notify-schema';
import type {
  CanaryProgress,
  Limits,
  LimitsChange,
  OperatorAction,
  PartitionCondition,
  CancelRequest,
  PauseRequest,
  PartitionReport,
  RowCounts,
  RunProgress,
  WorkerGap,
} from '../domain/types';

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
}

/** How do reports of partitions not in flight count: dropped (executions before the patch), or kept for their launch. */
export interface ReportRules {
  keepEarly: boolean;
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

export function decided(
  s: RunState,
  kind: ControlEvent['kind'],
  who: OperatorAction | undefined,
  key: string,
  change: Partial<RunState>,
  detail?: Record<string, unknown>,
): RunState {
  const event: ControlEvent = { key: `${kind}-${key}`, kind, actor: who?.actor ?? 'unknown', reason: who?.reason, ...(detail ? { detail } : {}) };
  return { ...s, ...change, controlVersion: s.controlVersion + 1, pendingEvents: [...s.pendingEvents, event] };
}

export const actor = (a: OperatorAction | undefined): OperatorAction => ({ actor: a?.actor ?? 'unknown', reason: a?.reason });

/** Pausing a paused or cancelling run changes nothing; nor does an engine's request decided before the latest operator action. */
export function pause(s: RunState, who: PauseRequest | undefined, key: string): RunState {
  if (s.paused || s.cancelRequested) return s;
  if (who?.basedOnVersion !== undefined && who.basedOnVersion < s.controlVersion) return s;
  return decided(s, 'paused', who && { actor: who.actor, reason: who.reason }, key, { paused: true, heldBy: actor(who) });
}

export function resume(s: RunState, who: OperatorAction | undefined, key: string): RunState {
  // a canary hold is lifted by approve, which records who decided to expand despite it
  if (!s.paused || s.cancelRequested || gateHeld(s)) return s;
  return decided(s, 'resumed', who, key, { paused: false, heldBy: undefined });
}

/**
 * A cancel by signal or update, or (byTemporal) a Temporal cancellation of the workflow turned
 * into the same orderly stop. The cancel update of `backfill cancel` is followed by Temporal's
 * cancellation, which then only marks the execution to end Canceled: the update recorded who.
 */
export function requestCancel(s: RunState, who: CancelRequest | undefined, key: string, byTemporal = false): RunState {
  if (s.cancelRequested) return byTemporal && s.awaitingTemporalCancel ? { ...s, cancelledByTemporal: true } : s;
  return decided(s, 'cancel-requested', who && { actor: who.actor, reason: who.reason }, key, {
    cancelRequested: true,
    heldBy: actor(who),
    ...(byTemporal ? { cancelledByTemporal: true } : {}),
    ...(who?.thenTemporalCancel && !byTemporal ? { awaitingTemporalCancel: true } : {}),
  });
}

export type OperatorControl = 'pause' | 'resume' | 'cancel';

/**
 * Why an operator's pause, resume or cancel does not apply to the run as it is now (the
 * updates' validator: a refusal leaves nothing in history), or undefined when it does.
 * `finishing`: the run is past its loops, recording its outcome.
 */
export function controlRefusal(s: RunState, runId: string, action: OperatorControl, finishing = false): string | undefined {
  if (FINISHED_RUN_STATUSES.includes(s.status)) return `run ${runId} already finished (${s.status}); there is nothing to ${action}`;
  if (finishing) return `run ${runId} is finishing (its last partitions are done and its outcome is being recorded); there is nothing to ${action}`;
  if (s.cancelRequested) return action === 'cancel' ? `run ${runId} is already being cancelled` : `run ${runId} is being cancelled; it cannot ${action}`;
  if (action === 'pause' && s.paused) {
    const by = s.heldBy ? ` by ${s.heldBy.actor}${s.heldBy.reason ? ` (${s.heldBy.reason})` : ''}` : '';
    return `run ${runId} is already paused${by}; resume it with: backfill resume ${runId}`;
  }
  if (action === 'resume') {
    const approve = `let it go on with: backfill approve ${runId} --reason "…", or cancel it`;
    if (s.canary?.phase === 'held') return `run ${runId} is held by its canary, not paused: ${s.canary.held ?? 'waiting for approval'}; ${approve}`;
    if (s.ramp?.phase === 'held') return `run ${runId} is held by a ramp stage, not paused: ${s.ramp.held ?? 'waiting for approval'}; ${approve}`;
    if (!s.paused) return `run ${runId} is not paused; there is nothing to resume`;
  }
  return undefined;
}

/**
 * Why a live limits change is refused (the update's validator), or undefined. `finishing`: past
 * its loops no chunk is left to use them, and nothing would record the change before the run ends.
 */
export function limitsChangeRefusal(s: RunState, runId: string, change: LimitsChange, finishing = false): string | undefined {
  const problem = limitsChangeProblem(change);
  if (problem) return problem;
  if (s.cancelRequested || FINISHED_RUN_STATUSES.includes(s.status))
    return `run ${runId} is ${s.cancelRequested ? 'cancelling' : s.status}; its limits can no longer change`;
  if (finishing) return `run ${runId} is finishing (its last partitions are done and its outcome is being recorded); its limits can no longer change`;
  return undefined;
}

export function changeLimits(s: RunState, change: LimitsChange, key: string): RunState {
  const to = applyLimitsChange(s.limits, change);
  return decided(s, 'limits-changed', change, key, { limits: to }, { from: s.limits, to });
}

/** Held by a gate (the canary, or a ramp stage): only approve or cancel ends it. */
export function gateHeld(s: RunState): boolean {
  return s.canary?.phase === 'held' || s.ramp?.phase === 'held';
}

/** The ledger now holds `version` and the events sent with it; `status` is the run's status there. */
export function synced(s: RunState, version: number, sent: ControlEvent[], status: RunStatus): RunState {
  const keys = new Set(sent.map((e) => e.key));
  return { ...s, status, syncedVersion: Math.max(s.syncedVersion, version), pendingEvents: s.pendingEvents.filter((e) => !keys.has(e.key)) };
}

export function isDirty(s: RunState): boolean {
  return s.controlVersion !== s.syncedVersion;
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
    if (!rules?.keepEarly || !FINISHED_PARTITION_STATUSES.includes(report.status)) return s;
    return { ...s, early: [...(s.early ?? []).filter((r) => r.partitionId !== report.partitionId), report].slice(-EARLY_REPORTS_KEPT) };
  }
  const conditions = { ...(s.conditions ?? {}) };
  delete conditions[report.partitionId];
  const finishedStatus = FINISHED_PARTITION_STATUSES.includes(report.status);
  return {
    ...s,
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
  return { ...s, inFlight: s.inFlight.filter((id) => id !== partitionId) };
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
  const average = rowsPerPartition(s.rowsPlanned, s.partitionsTotal);
  return average !== undefined && average <= 2 * s.limits.chunkSize;
}
