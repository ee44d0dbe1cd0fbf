/**
 * Splitting the tail (`limits.splitTail`) in the run workflow's state: when the run may ask for a
 * running partition to be cut so a free slot takes half of it, and what a cut adds. Plain
 * functions over RunState like run-state.ts, so replay-safe and unit-tested.
 */
import { rampCutoff } from './gate-state';
import type { RunState } from './run-state';

/**
 * A slot is free, nothing is left to start, partitions are running and the run is neither
 * paused nor cancelling nor holding back a ramp stage: a running partition may be cut. `tried`
 * is what the last cut that found nothing worth cutting saw (tailKey): nothing has changed since
 * that would make a cut worth it now, so the run does not ask again.
 */
export function wantsSplit(s: RunState, planLeft: boolean, tried: string | undefined): boolean {
  return (
    s.limits.splitTail === true &&
    !planLeft &&
    !s.paused &&
    !s.cancelRequested &&
    s.inFlight.length > 0 &&
    s.inFlight.length < s.limits.concurrency &&
    rampCutoff(s) === Infinity &&
    tailKey(s) !== tried
  );
}

/** What a cut depends on: the partitions in flight and how many slots there are. */
export function tailKey(s: RunState): string {
  return `${s.limits.concurrency}|${s.inFlight.join(',')}`;
}

/** A cut added a partition at the end of the plan: the ledger now holds `partitions`. */
export function partitionsCut(s: RunState, partitions: number): RunState {
  return { ...s, partitionsTotal: Math.max(s.partitionsTotal, partitions) };
}
