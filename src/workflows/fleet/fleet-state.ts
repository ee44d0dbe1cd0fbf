/**
 * A fleet's state and every change to it, as pure functions (the workflow wires them to
 * Temporal): which member starts next, what a member's end does to the fleet, the operator's
 * pause, resume, cancel and wave approval, and the fleet's status. Unit-tested without a server.
 *
 * - Members start in waves; the next wave starts once every member of this one has finished
 *   (and, with `approve`, once a person approved it). At most `concurrency` members run at once.
 * - onError stop: once a member fails, no other member starts; those running finish. continue:
 *   the rest carry on; the fleet ends failed, naming the members that failed.
 * - Pause: no member starts, and the running ones are paused; cancel: none starts, the running
 *   ones are cancelled, the rest are not started.
 */
import type { OperatorAction } from '../../domain/types';
import type { RunResult } from '../run/input';
import type { FleetResult, FleetStatus, FleetWorkflowInput, MemberOutcome } from './input';

export interface FleetEvent {
  at: string;
  kind: 'paused' | 'resumed' | 'cancel-requested' | 'wave-approved' | 'member-started' | 'member-finished' | 'stopping';
  actor?: string;
  reason?: string;
  member?: string;
  wave?: number;
}

export interface FleetState {
  members: MemberOutcome[];
  /** The wave starting or running; 0 before the first. */
  wave: number;
  waves: number;
  concurrency: number;
  onError: 'stop' | 'continue';
  /** Waves after the first wait for a person. */
  approve: boolean;
  /** Set while waiting for a person to approve this wave. */
  awaitingApproval?: number;
  approvals: Record<number, OperatorAction>;
  paused?: OperatorAction;
  cancelRequested?: OperatorAction;
  /** Why no further member starts: a member failed under onError stop. */
  stopping?: string;
  /** The last events, newest last (bounded: the ledgers of the members keep theirs for good). */
  events: FleetEvent[];
}

const EVENTS_KEPT = 50;

export function initialFleet(input: FleetWorkflowInput, workflowIdOf: (runId: string) => string): FleetState {
  const { record } = input;
  return {
    // an earlier attempt's succeeded members are shown, never started again
    members: input.members.map((m) => ({
      variable: m.variable,
      wave: m.wave,
      runId: m.runId,
      workflowId: workflowIdOf(m.runId),
      ...(m.succeeded ? { status: 'succeeded', result: m.succeeded } : { status: 'waiting' }),
    })),
    wave: 0,
    waves: record.waves,
    concurrency: record.concurrency,
    onError: record.onError,
    approve: record.approve,
    approvals: {},
    events: [],
  };
}

function withEvent(s: FleetState, e: FleetEvent): FleetState {
  return { ...s, events: [...s.events, e].slice(-EVENTS_KEPT) };
}

function setMember(s: FleetState, variable: string, change: Partial<MemberOutcome>): FleetState {
  return { ...s, members: s.members.map((m) => (m.variable === variable ? { ...m, ...change } : m)) };
}

export const running = (s: FleetState) => s.members.filter((m) => m.status === 'running');
const ofWave = (s: FleetState, wave: number) => s.members.filter((m) => m.wave === wave);

/** No member may start any more: cancelled, or stopped by a failure. */
export function startsNoMore(s: FleetState): boolean {
  return s.cancelRequested !== undefined || s.stopping !== undefined;
}

/** The next member to start now, if one may: in the current wave, not paused, a slot free. */
export function nextToStart(s: FleetState): MemberOutcome | undefined {
  if (startsNoMore(s) || s.paused || s.awaitingApproval !== undefined || s.wave === 0) return undefined;
  if (running(s).length >= s.concurrency) return undefined;
  return ofWave(s, s.wave).find((m) => m.status === 'waiting');
}

/** Every member of the current wave has finished (none waits or runs). */
export function waveDone(s: FleetState): boolean {
  return ofWave(s, s.wave).every((m) => m.status !== 'waiting' && m.status !== 'running');
}

/** Moves to the next wave, waiting for a person first where the spec asks for it; undefined when none is left. */
export function nextWave(s: FleetState): FleetState | undefined {
  const wave = s.wave + 1;
  if (wave > s.waves || startsNoMore(s)) return undefined;
  // a wave with nothing left to start (an earlier attempt did it) needs nobody's approval
  const waiting = s.approve && wave > 1 && !s.approvals[wave] && ofWave(s, wave).some((m) => m.status === 'waiting');
  return { ...s, wave, awaitingApproval: waiting ? wave : undefined };
}

export function memberStarted(s: FleetState, variable: string, at: string): FleetState {
  return withEvent(setMember(s, variable, { status: 'running' }), { at, kind: 'member-started', member: variable, wave: s.wave });
}

/** A member's run ended: succeeded, failed (its result, or why it could not run), or cancelled. */
export function memberFinished(
  s: FleetState,
  variable: string,
  outcome: { status: 'succeeded' | 'failed' | 'cancelled'; result?: RunResult; error?: string },
  at: string,
): FleetState {
  let next = setMember(s, variable, {
    status: outcome.status,
    ...(outcome.result ? { result: outcome.result } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  });
  next = withEvent(next, { at, kind: 'member-finished', member: variable, reason: outcome.status });
  if (outcome.status === 'failed' && s.onError === 'stop' && !next.stopping && !next.cancelRequested) {
    const why = `${variable} failed; onError: stop starts no other member`;
    next = withEvent({ ...next, stopping: why }, { at, kind: 'stopping', member: variable, reason: why });
  }
  return next;
}

export function pause(s: FleetState, who: OperatorAction, at: string): FleetState {
  return withEvent({ ...s, paused: who }, { at, kind: 'paused', actor: who.actor, reason: who.reason });
}

export function resume(s: FleetState, who: OperatorAction, at: string): FleetState {
  return withEvent({ ...s, paused: undefined }, { at, kind: 'resumed', actor: who.actor, reason: who.reason });
}

export function requestCancel(s: FleetState, who: OperatorAction, at: string): FleetState {
  return withEvent({ ...s, cancelRequested: who, awaitingApproval: undefined }, { at, kind: 'cancel-requested', actor: who.actor, reason: who.reason });
}

export function approveWave(s: FleetState, who: OperatorAction, at: string): FleetState {
  const wave = s.awaitingApproval!;
  return withEvent(
    { ...s, awaitingApproval: undefined, approvals: { ...s.approvals, [wave]: who } },
    { at, kind: 'wave-approved', wave, actor: who.actor, reason: who.reason },
  );
}

export type FleetControl = 'pause' | 'resume' | 'cancel' | 'approve';

/** Why an operator's action does not apply now (the updates' validator), or undefined. */
export function controlRefusal(s: FleetState, fleetId: string, action: FleetControl, finished: boolean): string | undefined {
  if (finished) return `fleet ${fleetId} already finished (${fleetStatus(s, true)}); there is nothing to ${action}`;
  if (s.cancelRequested)
    return action === 'cancel' ? `fleet ${fleetId} is already being cancelled` : `fleet ${fleetId} is being cancelled; it cannot ${action}`;
  switch (action) {
    case 'pause':
      return s.paused ? `fleet ${fleetId} is already paused by ${s.paused.actor}; resume it with: backfill resume ${fleetId}` : undefined;
    case 'resume':
      return s.paused ? undefined : `fleet ${fleetId} is not paused`;
    case 'approve':
      return s.awaitingApproval === undefined
        ? `fleet ${fleetId} is not waiting for an approval (wave ${s.wave} of ${s.waves}${s.approve ? '' : '; its spec does not ask for one'})`
        : undefined;
    case 'cancel':
      return undefined;
  }
}

/** Members that never started, once the fleet is done starting: cancelled or stopped before their turn. */
export function closeUnstarted(s: FleetState): FleetState {
  return { ...s, members: s.members.map((m) => (m.status === 'waiting' ? { ...m, status: 'not-started' } : m)) };
}

export function fleetStatus(s: FleetState, finished: boolean): FleetStatus {
  if (finished) {
    if (s.members.every((m) => m.status === 'succeeded')) return 'succeeded';
    return s.cancelRequested && !s.members.some((m) => m.status === 'failed') ? 'cancelled' : 'failed';
  }
  if (s.cancelRequested) return 'cancelling';
  if (s.paused) return 'paused';
  if (s.awaitingApproval !== undefined) return 'awaiting-approval';
  return 'running';
}

export function fleetResult(fleetId: string, s: FleetState): FleetResult {
  return {
    fleetId,
    status: fleetStatus(s, true),
    members: s.members,
    rowsWritten: s.members.reduce((n, m) => n + (m.result?.rowsWritten ?? 0), 0),
  };
}
