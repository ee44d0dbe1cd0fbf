/**
 * The plan's projection of a whole run from its sample: rows, bytes and seconds scaled to the
 * scope, Temporal's part of each partition, the run's fixed costs, and which limit sets the
 * duration. Pure arithmetic over what estimate-plan.ts measured, so it is tested without a database.
 */
import { undoKeep, type ResolvedSpec } from '../specs/resolve';
import { finalSampleEvery } from '../gates/gate-checks';
import { MAX_CHECK_CONCURRENCY } from '../domain/limits';
import type { SampledWork } from './estimate-sample';
import { describePace, type OrchestrationPace } from './orchestration-pace';

/** Starting the run workflow and finishing it (finalize, the ledger's proof), beside its checks. */
const RUN_START_AND_FINISH_SECONDS = 0.3;
/** The final check's own cost per partition (its slice's bounds, a transaction, the tally). */
const FINAL_CHECK_MS_PER_PARTITION = 5;

/** The rows in scope, as estimate-plan.ts found them. */
export interface ScopeFacts {
  rows: number;
  exact: boolean;
  rowsPerPartition: number;
  bytesRead: number | null;
}

/**
 * What the sample measures beside the rows: the partitions' work side by side, the checks' and
 * count's own time, and Temporal's part of a partition (measured from recent runs where the ledger has them).
 */
export interface MeasuredFacts {
  parallel: number;
  countSeconds: number;
  checkSeconds: number;
  pace: OrchestrationPace;
}

export interface Projection {
  inserts: number;
  updates: number;
  unchanged: number;
  /** Reading and transforming every row, spread over the concurrent partitions. */
  computeSeconds: number;
  /** Writing the changed rows; measured only with measureWrites. */
  writeSeconds?: number;
  /** The target's growth (heap, indexes, TOAST) until vacuum reclaims old row versions; measured only with measureWrites. */
  storageBytes?: number;
  /** Starting and reporting the partitions, spread over the concurrency slots. */
  orchestrationSeconds: number;
  /** Temporal's part of a partition that orchestrationSeconds reckons with, and where it comes from. */
  pace: OrchestrationPace;
  /** Registering the run (its checks) and its final check and finish. */
  fixedSeconds: number;
  walBytes?: number;
  /**
   * Before-images (docs/undo.md): one per row inserted or updated (replace mode adds the rows
   * it deletes, not sampled), kept `keep` after the run; bytes measured only with measureWrites.
   * Absent with `undo: off`.
   */
  images?: { rows: number; bytes?: number; keep: string };
  /** What the duration takes for granted: the run's own limits, the workers, Temporal, the database as the sample found it. */
  assumes: string[];
  /** The whole run, and what sets it. */
  durationSeconds: number;
  bindingLimit: string;
  /** The duration leaves out the writes (not measured). */
  lowerBound: boolean;
}

/** The whole run, from the sample: rows, bytes and seconds scaled to the scope, and what binds the duration. */
export function project(spec: ResolvedSpec, partitions: number, scope: ScopeFacts, work: SampledWork, measured: MeasuredFacts): Projection {
  const { rows } = work;
  const { parallel, pace } = measured;
  const w = work.written;
  const perRow = (n: number) => (rows > 0 ? scope.rows * (n / rows) : 0);
  const computeSeconds = perRow(work.computeMs) / 1000 / parallel;
  const inserts = Math.round(perRow(work.inserts));
  const updates = Math.round(perRow(work.updates));
  const writeSeconds = w && rows > 0 ? perRow(w.ms) / 1000 / parallel : undefined;
  const slots = Math.max(1, Math.min(spec.limits.concurrency, partitions));
  // Temporal's part: each partition holds a slot for its hops, and the server has a rate of its own
  const orchestrationSeconds = (partitions * Math.max(pace.slotMs / slots, pace.msPerPartition)) / 1000;
  const databaseSeconds = computeSeconds + (writeSeconds ?? 0);
  // in its slot, a partition's hops and its database work follow one another; the database's
  // work of all partitions (as it ran `parallel` at a time) spreads over the slots
  const slotSeconds = (partitions * pace.slotMs) / 1000 / slots + (databaseSeconds * parallel) / slots;
  // `start` runs this plan's checks, and registering runs them again and counts the scope; the
  // final check recomputes its share of every partition, in one lane per slot as the run's
  // partitions ran (workflows/run/finish.ts): its transactions overlap lane by lane, its
  // recomputing only as far as the database runs work side by side
  const sampleEvery = finalSampleEvery(spec.validate);
  const perRowMs = rows > 0 ? work.computeMs / rows : 0;
  const checkLanes = Math.max(1, Math.min(slots, MAX_CHECK_CONCURRENCY));
  const finalSeconds =
    sampleEvery === 0
      ? 0
      : ((scope.rows / sampleEvery) * perRowMs) / 1000 / Math.min(checkLanes, parallel) + (partitions * FINAL_CHECK_MS_PER_PARTITION) / 1000 / checkLanes;
  const fixedSeconds = 2 * measured.checkSeconds + measured.countSeconds + finalSeconds + RUN_START_AND_FINISH_SECONDS;
  const n = parallel.toFixed(1).replace(/\.0$/, '');
  const at = `${n === '1' ? "one partition's" : `${n} partitions'`} work at a time (measured)`;
  const paced = Math.max(databaseSeconds, orchestrationSeconds, slotSeconds);
  const duration = bound(
    spec,
    scope.rows,
    paced + fixedSeconds,
    (() => {
      if (paced === orchestrationSeconds && orchestrationSeconds > slotSeconds)
        return `orchestration: ${partitions} partitions at about ${Math.round(pace.msPerPartition)} ms each, the most Temporal starts and reports a second`;
      if (paced === slotSeconds && slotSeconds > databaseSeconds)
        return `orchestration: ${partitions} partitions, ${slots} at a time (limits.concurrency)${pace.grouped ? ' in groups' : ''}, each holding its slot about ${Math.round(pace.slotMs)} ms for Temporal besides its database work`;
      return w ? `the database: ${at}` : `reading and transforming, ${at}; writes not measured`;
    })(),
  );
  const keep = undoKeep(spec);
  const assumes = [
    `${slots} partitions in flight (limits.concurrency), on workers with at least ${slots} activity slots between them (BACKFILL_MAX_ACTIVITIES)`,
    `the database as busy as during the sample, and able to run ${at.replace(' (measured)', '')}`,
    describePace(pace),
    `the ${rows} sampled rows typical of the ${scope.rows} in scope`,
    'no pause, guard hold or live change of limits on the way',
  ];
  return {
    assumes,
    inserts,
    updates,
    unchanged: scope.rows - inserts - updates,
    computeSeconds,
    orchestrationSeconds,
    pace,
    fixedSeconds,
    ...(w && writeSeconds !== undefined ? { writeSeconds, walBytes: Math.round(perRow(w.walBytes)), storageBytes: Math.round(perRow(w.storageBytes)) } : {}),
    ...(keep !== null
      ? {
          images: {
            rows: inserts + updates,
            // bytes per image as the samples stored them, for every row the run will change
            ...(w ? { bytes: w.imageRows > 0 ? Math.round((inserts + updates) * (w.imageBytes / w.imageRows)) : 0 } : {}),
            keep,
          },
        }
      : {}),
    ...duration,
    lowerBound: !w,
  };
}

/** The rows/s cap and the allowed hours stretch a duration, and say so. */
function bound(spec: ResolvedSpec, scopeRows: number, seconds: number, limit: string): { durationSeconds: number; bindingLimit: string } {
  let durationSeconds = seconds;
  let bindingLimit = limit;
  if (spec.limits.rowsPerSecond) {
    // every row read counts against the cap, written or not
    const capped = scopeRows / spec.limits.rowsPerSecond;
    if (capped > durationSeconds) {
      durationSeconds = capped;
      bindingLimit = `the rows/s cap (${spec.limits.rowsPerSecond} rows/s)`;
    }
  }
  if (spec.limits.window) {
    const open = windowHoursPerDay(spec.limits.window.start, spec.limits.window.end);
    durationSeconds *= 24 / open;
    bindingLimit += ` and the window (${open} of 24 hours)`;
  }
  return { durationSeconds, bindingLimit };
}

function windowHoursPerDay(start: string, end: string): number {
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const span = (minutes(end) - minutes(start) + 24 * 60) % (24 * 60);
  return (span === 0 ? 24 * 60 : span) / 60;
}
