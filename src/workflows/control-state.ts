/**
 * The operator's side of the run's state: pause, resume, cancel, new limits, the validators
 * that refuse them, and the control version the ledger syncs to. Plain functions, replay-safe
 * and unit-tested, as in run-state.ts (the partitions' side).
 */
import { applyLimitsChange, limitsChangeProblem } from '../domain/limits';
import { FINISHED_RUN_STATUSES, type RunStatus } from '../domain/statuses';
import type { CancelRequest, LimitsChange, OperatorAction, PauseRequest } from '../domain/types';
import type { ControlEvent, RunState } from './run-state';

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
