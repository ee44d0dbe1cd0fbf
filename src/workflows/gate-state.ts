/**
 * The gates in the run workflow's state: the canary (its partitions first, alone, then
 * judged), ramp stages (the plan released a stage at a time, each judged), the hold a failed
 * gate (or a required approval) puts on the run, and the approval that lifts it. Plain
 * functions over RunState like run-state.ts, so replay-safe and unit-tested.
 */
import type { OperatorAction } from '../domain/types';
import { actor, decided, gateHeld } from './control-state';
import { nowInFlight, type GateVerdictLike, type RunState } from './run-state';

export { gateHeld };

/** The canary's partitions, chosen by the ledger: they run first, alone. */
export function canaryPicked(s: RunState, ids: string[]): RunState {
  return { ...s, canary: { partitions: ids, launched: 0, phase: 'running' } };
}

export function canaryCanLaunch(s: RunState): boolean {
  return (
    !!s.canary &&
    s.canary.phase === 'running' &&
    !s.paused &&
    !s.cancelRequested &&
    s.inFlight.length < s.limits.concurrency &&
    s.canary.launched < s.canary.partitions.length
  );
}

/** Launches the canary's next partition (out of plan order: the run's paging is untouched). */
export function canaryLaunched(s: RunState): { s: RunState; id: string } {
  const c = s.canary!;
  const id = c.partitions[c.launched];
  return { s: nowInFlight({ ...s, canary: { ...c, launched: c.launched + 1 } }, id), id };
}

/** The canary already started this partition: the plan's pass over it must not run (and count) it again. */
export function ranInCanary(s: RunState, partitionId: string): boolean {
  const c = s.canary;
  return !!c && c.partitions.slice(0, c.launched).includes(partitionId);
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
    return decided(
      next,
      'canary-failed',
      { actor: 'backfill', reason: held },
      key,
      { paused: true, heldBy: { actor: 'canary', reason: held } },
      { failures, failureCount: verdict.failureCount },
    );
  }
  if (approveRequired) {
    const held = `the canary passed (${c.partitions.length} partition(s)); waiting for approval: backfill approve ${runId} --reason …`;
    const next = { ...s, canary: { ...c, phase: 'held' as const, held } };
    return decided(
      next,
      'canary-passed',
      { actor: 'backfill', reason: held },
      key,
      { paused: true, heldBy: { actor: 'canary', reason: held } },
      { partitions: c.partitions },
    );
  }
  return decided({ ...s, canary: { ...c, phase: 'passed' } }, 'canary-passed', { actor: 'backfill' }, key, {}, { partitions: c.partitions });
}

/** Why approve is refused (the update's validator), or undefined. */
export function approveRefusal(s: RunState, runId: string): string | undefined {
  if (!gateHeld(s) || s.cancelRequested) {
    const what = s.canary
      ? ` (its canary is ${s.canary.phase}${s.ramp ? `, ramp stage ${s.ramp.stage + 1} ${s.ramp.phase}` : ''})`
      : s.ramp
        ? ` (ramp stage ${s.ramp.stage + 1} is ${s.ramp.phase})`
        : ' (it has no canary or ramp)';
    return `run ${runId} is not waiting for approval${what}`;
  }
  return undefined;
}

/** A person lets the run expand beyond its canary or ramp stage; recorded with who and why. */
export function approve(s: RunState, who: OperatorAction, key: string): RunState {
  if (s.ramp?.phase === 'held') {
    const r = s.ramp;
    return decided(
      { ...s, ramp: { ...r, phase: 'running', held: undefined, stage: r.stage + 1 } },
      'approved',
      who,
      key,
      { paused: false, heldBy: undefined },
      { rampStage: r.stage + 1 },
    );
  }
  const c = s.canary!;
  return decided(
    { ...s, canary: { ...c, phase: 'approved', held: undefined, approvedBy: actor(who) } },
    'approved',
    who,
    key,
    { paused: false, heldBy: undefined },
    { canaryFailures: c.failures ?? [] },
  );
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
  return (
    !!s.ramp &&
    s.ramp.phase === 'running' &&
    rampCutoff(s) !== Infinity &&
    s.inFlight.length === 0 &&
    (nextOrdinal === undefined || nextOrdinal >= rampCutoff(s))
  );
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
  return decided(
    next,
    'stage-failed',
    { actor: 'backfill', reason: held },
    key,
    { paused: true, heldBy: { actor: 'ramp', reason: held } },
    { stage, failures: verdict.failures },
  );
}
