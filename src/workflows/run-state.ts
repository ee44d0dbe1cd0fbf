/**
 * The run workflow's state and every change to it, as plain functions: operator actions
 * (pause, resume, cancel, new limits), partition reports and conditions, launches, ledger
 * syncs, and the progress view. No Temporal API here, and the time and ids come in as
 * arguments, so each function is replay-safe and unit-tested over tables of cases.
 * The state is carried across continue-as-new: its fields only ever grow, optional.
 */
import { applyLimitsChange, limitsChangeProblem } from '../shared/limits';
import { FINISHED_PARTITION_STATUSES, FINISHED_RUN_STATUSES, type RunStatus } from '../shared/statuses';
import type { CanaryProgress, Limits, LimitsChange, OperatorAction, PartitionCondition, PartitionReport, RowCounts, RunProgress } from '../shared/types';

/** An operator action waiting to be written to the ledger's run_events; `key` makes the write idempotent. */
export interface ControlEvent extends OperatorAction {
  key: string;
  kind: 'paused' | 'resumed' | 'cancel-requested' | 'limits-changed' | 'canary-passed' | 'canary-failed' | 'stage-passed' | 'stage-failed' | 'approved';
  detail?: Record<string, unknown>;
}

export interface RunState {
  partitionsTotal: number;
  nextOrdinal: number;
  inFlight: string[];
  counts: { succeeded: number; failed: number; cancelled: number };
  finished: RowCounts;
  paused: boolean;
  cancelRequested: boolean;
  cancelledByTemporal: boolean;
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
}

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
  /** The first page of the plan still to run, so partitions start without another round trip. */
  firstPage: { id: string; ordinal: number }[];
  /** Partitions that succeeded in earlier attempts, and their rows (0 on a first attempt). */
  succeeded?: number;
  finished?: RowCounts;
  /** The ledger's control version (0 on a first attempt). */
  controlVersion?: number;
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
  const next: RunState = { ...s, partitionsTotal: opening.partitionsTotal, status: 'running' };
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

function decided(s: RunState, kind: ControlEvent['kind'], who: OperatorAction | undefined, key: string, change: Partial<RunState>, detail?: Record<string, unknown>): RunState {
  const event: ControlEvent = { key: `${kind}-${key}`, kind, actor: who?.actor ?? 'unknown', reason: who?.reason, ...(detail ? { detail } : {}) };
  return { ...s, ...change, controlVersion: s.controlVersion + 1, pendingEvents: [...s.pendingEvents, event] };
}

const actor = (a: OperatorAction | undefined): OperatorAction => ({ actor: a?.actor ?? 'unknown', reason: a?.reason });

/** Pausing a paused or cancelling run changes nothing. */
export function pause(s: RunState, who: OperatorAction | undefined, key: string): RunState {
  if (s.paused || s.cancelRequested) return s;
  return decided(s, 'paused', who, key, { paused: true, heldBy: actor(who) });
}

export function resume(s: RunState, who: OperatorAction | undefined, key: string): RunState {
  // a canary hold is lifted by approve, which records who decided to expand despite it
  if (!s.paused || s.cancelRequested || gateHeld(s)) return s;
  return decided(s, 'resumed', who, key, { paused: false, heldBy: undefined });
}

/** A cancel by signal, or (byTemporal) a Temporal cancellation of the workflow turned into the same orderly stop. */
export function requestCancel(s: RunState, who: OperatorAction | undefined, key: string, byTemporal = false): RunState {
  if (s.cancelRequested) return s;
  return decided(s, 'cancel-requested', who, key, { cancelRequested: true, heldBy: actor(who), ...(byTemporal ? { cancelledByTemporal: true } : {}) });
}

/** Why a live limits change is refused (the update's validator), or undefined. */
export function limitsChangeRefusal(s: RunState, runId: string, change: LimitsChange): string | undefined {
  const problem = limitsChangeProblem(change);
  if (problem) return problem;
  if (s.cancelRequested || FINISHED_RUN_STATUSES.includes(s.status)) return `run ${runId} is ${s.cancelRequested ? 'cancelling' : s.status}; its limits can no longer change`;
  return undefined;
}

export function changeLimits(s: RunState, change: LimitsChange, key: string): RunState {
  const to = applyLimitsChange(s.limits, change);
  return decided(s, 'limits-changed', change, key, { limits: to }, { from: s.limits, to });
}

/** The canary's partitions, chosen by the ledger: they run first, alone. */
export function canaryPicked(s: RunState, ids: string[]): RunState {
  return { ...s, canary: { partitions: ids, launched: 0, phase: 'running' } };
}

export function canaryCanLaunch(s: RunState): boolean {
  return !!s.canary && s.canary.phase === 'running' && !s.paused && !s.cancelRequested && s.inFlight.length < s.limits.concurrency && s.canary.launched < s.canary.partitions.length;
}

/** Launches the canary's next partition (out of plan order: the run's paging is untouched). */
export function canaryLaunched(s: RunState): { s: RunState; id: string } {
  const c = s.canary!;
  const id = c.partitions[c.launched];
  return { s: { ...s, inFlight: [...s.inFlight, id], canary: { ...c, launched: c.launched + 1 } }, id };
}

/** Every canary partition started and reported. */
export function canaryFinished(s: RunState): boolean {
  const c = s.canary;
  return !!c && c.phase === 'running' && c.launched === c.partitions.length && !c.partitions.some((id) => s.inFlight.includes(id));
}

/** The canary's gates decided: expand, or hold for a person (it failed, or approval is required). */
export function canaryJudged(s: RunState, verdict: GateVerdictLike, approveRequired: boolean, runId: string, key: string): RunState {
  const c = s.canary!;
  const failures = verdict.failures;
  if (!verdict.passed) {
    const held =
      `the canary failed (${verdict.failureCount} problem(s): ${failures.slice(0, 3).join('; ')}); nothing beyond its ${c.partitions.length} partition(s) was written. ` +
      `Fix the transform and start a new run (backfill cancel ${runId}), or expand anyway: backfill approve ${runId} --reason …`;
    const next = { ...s, canary: { ...c, phase: 'held' as const, held, failures } };
    return decided(next, 'canary-failed', { actor: 'backfill', reason: held }, key, { paused: true, heldBy: { actor: 'canary', reason: held } }, { failures, failureCount: verdict.failureCount });
  }
  if (approveRequired) {
    const held = `the canary passed (${c.partitions.length} partition(s)); waiting for approval: backfill approve ${runId} --reason …`;
    const next = { ...s, canary: { ...c, phase: 'held' as const, held } };
    return decided(next, 'canary-passed', { actor: 'backfill', reason: held }, key, { paused: true, heldBy: { actor: 'canary', reason: held } }, { partitions: c.partitions });
  }
  return decided({ ...s, canary: { ...c, phase: 'passed' } }, 'canary-passed', { actor: 'backfill' }, key, {}, { partitions: c.partitions });
}

/** Held by a gate (the canary, or a ramp stage): only approve or cancel ends it. */
export function gateHeld(s: RunState): boolean {
  return s.canary?.phase === 'held' || s.ramp?.phase === 'held';
}

/** Why approve is refused (the update's validator), or undefined. */
export function approveRefusal(s: RunState, runId: string): string | undefined {
  if (!gateHeld(s) || s.cancelRequested) {
    const what = s.canary ? ` (its canary is ${s.canary.phase}${s.ramp ? `, ramp stage ${s.ramp.stage + 1} ${s.ramp.phase}` : ''})` : s.ramp ? ` (ramp stage ${s.ramp.stage + 1} is ${s.ramp.phase})` : ' (it has no canary or ramp)';
    return `run ${runId} is not waiting for approval${what}`;
  }
  return undefined;
}

/** A person lets the run expand beyond its canary or ramp stage; recorded with who and why. */
export function approve(s: RunState, who: OperatorAction, key: string): RunState {
  if (s.ramp?.phase === 'held') {
    const r = s.ramp;
    return decided({ ...s, ramp: { ...r, phase: 'running', held: undefined, stage: r.stage + 1 } }, 'approved', who, key, { paused: false, heldBy: undefined }, { rampStage: r.stage + 1 });
  }
  const c = s.canary!;
  return decided({ ...s, canary: { ...c, phase: 'approved', held: undefined, approvedBy: actor(who) } }, 'approved', who, key, { paused: false, heldBy: undefined }, { canaryFailures: c.failures ?? [] });
}

/** Ordinal bounds of the ramp's stages from shares of the plan ("10%", "50%"): ascending, distinct, inside the plan. */
export function rampCutoffs(total: number, shares: string[]): number[] {
  const cutoffs = shares.map((share) => Math.ceil((total * Number(share.replace('%', ''))) / 100)).filter((n) => n > 0 && n < total);
  return [...new Set(cutoffs)].sort((a, b) => a - b);
}

export function rampStarted(s: RunState, cutoffs: number[]): RunState {
  return cutoffs.length > 0 ? { ...s, ramp: { cutoffs, stage: 0, phase: 'running' } } : s;
}

/** Partitions at or beyond this ordinal wait for the current ramp stage to pass. */
export function rampCutoff(s: RunState): number {
  const r = s.ramp;
  return !r || r.stage >= r.cutoffs.length ? Infinity : r.cutoffs[r.stage];
}

/** The current stage's partitions all started and reported, and the next one is beyond it: time to check the stage. */
export function rampStageFinished(s: RunState, nextOrdinal: number | undefined): boolean {
  return !!s.ramp && s.ramp.phase === 'running' && rampCutoff(s) !== Infinity && s.inFlight.length === 0 && (nextOrdinal === undefined || nextOrdinal >= rampCutoff(s));
}

/** The stage's gates decided: the next stage, or a hold for a person. */
export function rampJudged(s: RunState, verdict: GateVerdictLike, runId: string, key: string): RunState {
  const r = s.ramp!;
  const stage = r.stage + 1;
  const upTo = r.cutoffs[r.stage];
  if (verdict.passed) return decided({ ...s, ramp: { ...r, stage: r.stage + 1 } }, 'stage-passed', { actor: 'backfill' }, key, {}, { stage, partitions: upTo });
  const held =
    `ramp stage ${stage} (the plan's first ${upTo} partitions) failed its gates (${verdict.failureCount} problem(s): ${verdict.failures.slice(0, 3).join('; ')}); nothing beyond it was written. ` +
    `Fix and start a new run (backfill cancel ${runId}), or continue anyway: backfill approve ${runId} --reason …`;
  const next = { ...s, ramp: { ...r, phase: 'held' as const, held } };
  return decided(next, 'stage-failed', { actor: 'backfill', reason: held }, key, { paused: true, heldBy: { actor: 'ramp', reason: held } }, { stage, failures: verdict.failures });
}

/** The ledger now holds `version` and the events sent with it; `status` is the run's status there. */
export function synced(s: RunState, version: number, sent: ControlEvent[], status: RunStatus): RunState {
  const keys = new Set(sent.map((e) => e.key));
  return { ...s, status, syncedVersion: Math.max(s.syncedVersion, version), pendingEvents: s.pendingEvents.filter((e) => !keys.has(e.key)) };
}

export function isDirty(s: RunState): boolean {
  return s.controlVersion !== s.syncedVersion;
}

/** A partition's outcome, from its own signal or from reconciliation; a second report for the same partition is ignored. */
export function applyReport(s: RunState, report: PartitionReport): RunState {
  if (!s.inFlight.includes(report.partitionId)) return s; // a duplicate, or a partition this run did not start
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
  return { ...s, nextOrdinal: partition.ordinal + 1, inFlight: [...s.inFlight, partition.id] };
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

export function progress(s: RunState, run: { runId: string; name: string }, nowMs: number): RunProgress {
  const done = s.counts.succeeded + s.counts.failed + s.counts.cancelled;
  const elapsedMin = (nowMs - new Date(s.startedAt).getTime()) / 60_000;
  const perMinute = done > 0 && elapsedMin > 0 ? done / elapsedMin : null;
  const remaining = Math.max(0, s.partitionsTotal - done);
  return {
    runId: run.runId,
    name: run.name,
    status: s.status,
    paused: s.paused,
    cancelRequested: s.cancelRequested,
    partitions: { total: s.partitionsTotal, pending: Math.max(0, s.partitionsTotal - done - s.inFlight.length), running: s.inFlight.length, ...s.counts },
    finished: { ...s.finished },
    limits: s.limits,
    startedAt: s.startedAt,
    partitionsPerMinute: perMinute,
    rowsPerSecond: elapsedMin > 0 && s.finished.rowsRead > 0 ? Math.round(s.finished.rowsRead / (elapsedMin * 60)) : null,
    etaSeconds: perMinute ? Math.round((remaining / perMinute) * 60) : null,
    continuedAsNew: s.continuedAsNew,
    heldBy: s.heldBy,
    lastError: s.lastError,
    conditions: Object.values(s.conditions ?? {}).sort((a, b) => (a.partitionId < b.partitionId ? -1 : 1)),
    ...(s.canary ? { canary: { partitions: s.canary.partitions, phase: s.canary.phase, held: s.canary.held, failures: s.canary.failures, approvedBy: s.canary.approvedBy } } : {}),
    ...(s.finalCheck ? { finalCheck: s.finalCheck } : {}),
    ...(s.ramp ? { ramp: { stage: Math.min(s.ramp.stage + 1, s.ramp.cutoffs.length + 1), stages: s.ramp.cutoffs.length + 1, phase: s.ramp.phase, held: s.ramp.held } } : {}),
  };
}
