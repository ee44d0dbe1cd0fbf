/**
 * The partition governor: before every chunk, a pure decision from what the worker knows —
 * the run's control row (pause, cancel, limits), the governing guard reading, the clock and
 * how long the last chunk took — to what it does next: write a chunk of N rows now, wait T
 * for reason R, ask the run to pause, or stop. It owns the pace, the adaptive chunk size and
 * the held-since clock; the processPartition activity only executes and records decisions.
 * Workflow-safe: no I/O, the time is passed in.
 */
import { describeReading, type GuardReading } from '../domain/guards';
import type { Limits } from '../domain/types';
import { describeWindow, msUntilOpen } from '../domain/window';
import { FULL_PACE, nextChunkSize, nextPace } from './pace';

/** What the governor remembers between chunks of one activity attempt. */
export interface GovernorState {
  /** See nextPace: FULL_PACE, or lower after soft guard readings. */
  pace: number;
  /** Set while limits.targetChunkSeconds sizes chunks. */
  adaptiveSize?: number;
  /** When a hard guard reading began holding the partition (ms since the epoch). */
  heldSince?: number;
  /** The last chunk's own duration, without its wait for a turn. */
  lastChunkMs: number;
  /** After a statement timeout: chunks stay at most this large for the rest of the attempt. */
  timeoutCap?: number;
}

export function initialGovernorState(): GovernorState {
  return { pace: FULL_PACE, lastChunkMs: 0 };
}

export interface GovernorInput {
  control: { paused: boolean; cancelRequested: boolean; limits: Limits };
  /** Now, in ms since the epoch. */
  now: number;
  /**
   * The governing guard reading (the worst, see `governing`): undefined when not measured
   * yet, null when measured and nothing is over a threshold.
   */
  reading?: GuardReading | null;
  /** How long a wait lasts before the control row is read again. */
  pollMs: number;
}

/** What shaped a chunk: recorded with it in backfill.chunks. */
export interface ChunkRecordDecision {
  governedBy: string;
  guardValue?: number;
  waitMs: number;
}

export type WaitState = 'paused' | 'outside-window' | 'held' | 'slowed' | 'throttled';

export type Decision =
  /** Cancel requested: stop at this chunk boundary and record the partition cancelled. */
  | { kind: 'stop' }
  /** Read the guards, then decide again with the reading. */
  | { kind: 'measure' }
  /** Write nothing now; wait `ms` in `state`, then decide again. `cause` names what governs ('guard:probeMs', 'window', 'lock'). */
  | { kind: 'wait'; state: WaitState; cause: string | null; reason: string | null; ms: number }
  /** A hard guard has held the partition past holdTimeoutSeconds: the run should pause for an operator. */
  | { kind: 'pause-run'; actor: string; reason: string }
  /**
   * Write a chunk of `chunkSize` rows. `before` is a wait to take first (a slowed pace);
   * `oneWriter` takes the run's writer lock, so the run's chunks commit one at a time.
   */
  | { kind: 'write'; chunkSize: number; oneWriter: boolean; before?: Extract<Decision, { kind: 'wait' }>; record: ChunkRecordDecision };

export interface Step {
  decision: Decision;
  state: GovernorState;
}

export function decide(state: GovernorState, input: GovernorInput): Step {
  const { control, now } = input;
  const { limits } = control;
  if (control.cancelRequested) return { decision: { kind: 'stop' }, state };
  if (control.paused) return { decision: wait('paused', null, 'run paused by an operator', input.pollMs), state };
  const closedFor = limits.window ? msUntilOpen(limits.window, new Date(now)) : 0;
  if (closedFor > 0) {
    // re-read the control row at least every pollMs, so pause, cancel and new limits still apply
    const reason = `outside the allowed hours ${describeWindow(limits.window!)}`;
    return { decision: wait('outside-window', 'window', reason, Math.min(closedFor, 30_000, input.pollMs)), state };
  }
  const wanted = state.adaptiveSize ?? limits.chunkSize;
  const capped = state.timeoutCap !== undefined && state.timeoutCap < wanted;
  const chunkSize = capped ? state.timeoutCap! : wanted;
  const record: ChunkRecordDecision = {
    governedBy: capped ? 'statementTimeoutSeconds' : state.adaptiveSize !== undefined ? 'targetChunkSeconds' : 'chunkSize',
    waitMs: 0,
  };
  if (!limits.guards) {
    return { decision: { kind: 'write', chunkSize, oneWriter: false, record }, state: { ...state, pace: FULL_PACE, heldSince: undefined } };
  }
  if (input.reading === undefined) return { decision: { kind: 'measure' }, state };

  const reading = input.reading;
  if (reading?.level === 'hard') {
    const heldSince = state.heldSince ?? now;
    const heldFor = (now - heldSince) / 1000;
    if (heldFor > (limits.guards.holdTimeoutSeconds ?? 600)) {
      return {
        decision: { kind: 'pause-run', actor: `guard:${reading.guard}`, reason: `held ${Math.round(heldFor)}s by ${describeReading(reading)}` },
        state: { ...state, heldSince },
      };
    }
    return { decision: wait('held', `guard:${reading.guard}`, `held by ${describeReading(reading)}`, input.pollMs), state: { ...state, heldSince } };
  }
  // graduated (AIMD): the first soft reading makes the run's partitions write one at a time,
  // further ones halve the share of time spent writing; clear readings give it back slowly
  const pace = nextPace(state.pace, reading?.level === 'soft');
  const next = { ...state, pace, heldSince: undefined };
  if (pace >= FULL_PACE) return { decision: { kind: 'write', chunkSize, oneWriter: false, record }, state: next };
  const soft = reading?.level === 'soft' ? reading : undefined;
  const duty = Math.min(1, pace);
  const ms = Math.round((1 / duty - 1) * state.lastChunkMs);
  const how = `one writer at a time${duty < 1 ? `, writing ${Math.round(duty * 100)} % of the time` : ''}`;
  const reason = `${soft ? `slowed by ${describeReading(soft)}` : 'slowed after a soft guard, speeding up again'} (${how})`;
  return {
    decision: {
      kind: 'write',
      chunkSize,
      oneWriter: true,
      before: wait('slowed', 'guard', reason, ms),
      record: { governedBy: soft ? `guard:${soft.guard}` : 'guard:easing', guardValue: soft?.value, waitMs: ms },
    },
    state: next,
  };
}

/**
 * Adds the run's shared rows/s budget to a write: the chunk waits `budgetWaitMs` before it
 * starts. A health guard outranks the budget in the record: it says why the database needed air.
 */
export function afterBudget(
  write: Extract<Decision, { kind: 'write' }>,
  budgetWaitMs: number,
  slowedReason: string | null,
): { write: typeof write; wait?: Extract<Decision, { kind: 'wait' }> } {
  if (budgetWaitMs <= 0) return { write };
  const record = write.record.governedBy.startsWith('guard:')
    ? { ...write.record, waitMs: write.record.waitMs + budgetWaitMs }
    : { governedBy: 'rowsPerSecond', waitMs: budgetWaitMs };
  // while slowed, the ledger keeps saying so; the budget alone is no reason to show
  return { write: { ...write, record }, wait: wait('throttled', null, slowedReason, budgetWaitMs) };
}

/** After a committed chunk: remember its duration and size the next one. */
export function afterChunk(state: GovernorState, chunk: { chunkSize: number; ms: number; limits: Limits }): GovernorState {
  return {
    ...state,
    lastChunkMs: chunk.ms,
    // turning targetChunkSeconds off live returns to the configured size
    adaptiveSize: chunk.limits.targetChunkSeconds ? nextChunkSize(chunk.chunkSize, chunk.ms, chunk.limits) : undefined,
  };
}

/** Halvings of limits.chunkSize a partition tries after statement timeouts before it fails. */
export const TIMEOUT_HALVINGS = 4;

/** The smallest chunk a partition tries after statement timeouts; one that times out at this size fails. */
export function timeoutFloor(limits: Limits): number {
  return Math.max(1, limits.minChunkSize ?? Math.floor(limits.chunkSize / 2 ** TIMEOUT_HALVINGS));
}

/** A chunk hit limits.statementTimeoutSeconds and rolled back: the next ones are half its size. */
export function afterStatementTimeout(state: GovernorState, chunk: { chunkSize: number; limits: Limits }): GovernorState {
  return { ...state, timeoutCap: Math.max(timeoutFloor(chunk.limits), Math.floor(chunk.chunkSize / 2)), adaptiveSize: undefined };
}

/** A chunk gave up waiting for a lock and rolled back: never queue behind it (everyone after us would queue too). */
export function afterLockTimeout(lockMessage: string, pollMs: number): Extract<Decision, { kind: 'wait' }> {
  return wait('held', 'lock', `waiting for a lock: ${lockMessage}`, pollMs);
}

function wait(state: WaitState, cause: string | null, reason: string | null, ms: number): Extract<Decision, { kind: 'wait' }> {
  return { kind: 'wait', state, cause, reason, ms };
}
