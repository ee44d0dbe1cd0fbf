/**
 * Temporal's part of a partition, as the projection (estimate-projection.ts) reckons it: how long
 * a partition holds its concurrency slot for its workflow, activity and report besides its
 * database work, and how many partitions the server orchestrates a second. The reference figures
 * are one machine's dev server, for partitions started one workflow each and for small ones
 * started in groups (the README, "Small partitions in groups"); where this ledger holds recent
 * undisturbed runs with many partitions, each run's span, against the reference of its own kind,
 * says how many times the reference this deployment takes (its machine, its server, its
 * workers), and the projection scales the reference of the planned run's kind by that.
 */
import type { RunTiming } from '../ledger/run-timings';
import { GROUP_SIZE } from '../domain/partition-average';

export interface OrchestrationPace {
  /** A partition's slot time for Temporal, besides its database work. */
  slotMs: number;
  /** The server's pace: at most one partition orchestrated every this many ms. */
  msPerPartition: number;
  /** The run starts its partitions in groups, as the plan's small partitions of a run of many would. */
  grouped: boolean;
  /** The reference figures, or the factor recent runs measured over them. */
  basis: { kind: 'reference' } | { kind: 'measured'; factor: number; runs: number; newest: Date };
}

/**
 * The reference: 110 ms of slot time for one-row partitions at concurrency 6 on the dev server
 * `demo` starts, with its fast task hand-offs (src/dev/services.ts), and one partition every
 * 18 ms (every 21 ms at concurrency 20, as two cores saturate); bench/RESULTS.md, "Small partitions".
 */
export const REFERENCE_PACE: OrchestrationPace = { slotMs: 110, msPerPartition: 18, grouped: false, basis: { kind: 'reference' } };

/** A grouped partition's orchestration against a partition's own workflow's: 1.05 / 2.03, measured (below). */
const GROUPED_FACTOR = 0.51;

/**
 * The reference for partitions started in groups: REFERENCE_PACE scaled by what groups measured
 * against single partitions on one machine, the same 365 day partitions of 822 rows at
 * concurrency 6 run both ways (`BENCH_PARTS=pace npm run bench:estimate`; bench/RESULTS-LOG.md, "The
 * estimate's pace for groups").
 */
export const REFERENCE_GROUPED_PACE: OrchestrationPace = {
  slotMs: REFERENCE_PACE.slotMs * GROUPED_FACTOR,
  msPerPartition: REFERENCE_PACE.msPerPartition * GROUPED_FACTOR,
  grouped: true,
  basis: { kind: 'reference' },
};

export function referencePace(grouped: boolean): OrchestrationPace {
  return grouped ? REFERENCE_GROUPED_PACE : REFERENCE_PACE;
}

/** Runs considered: the newest few, recent enough to be today's deployment. */
export const PACE_HISTORY = { limit: 5, minPartitions: 12, withinDays: 30 };

/** Below this share of the slots' time spent outside chunks, a run says too little about Temporal's part to measure it. */
const MIN_ORCHESTRATION_SHARE = 0.25;

/**
 * How many times the reference one run's orchestration took: the factor under which the
 * projection's own model (each slot holding its partitions' Temporal time and their chunks, and
 * the server's pace) gives the run's span from first partition start to last partition finish.
 */
export function paceFactor(run: RunTiming): number | undefined {
  const slots = Math.max(1, Math.min(run.concurrency, run.partitions));
  const slotTime = run.spanMs * slots;
  const outsideChunks = slotTime - run.chunkMs;
  if (run.partitions <= 0 || run.spanMs <= 0 || outsideChunks < MIN_ORCHESTRATION_SHARE * slotTime) return undefined;
  // the model's span is the longer of the slots' time and the server's pace, so the factor
  // that explains the span is the smaller of the two each would need
  const reference = referencePace(run.grouped);
  const bySlots = outsideChunks / (run.partitions * reference.slotMs);
  const byPace = run.spanMs / (run.partitions * reference.msPerPartition);
  return Math.min(bySlots, byPace);
}

/**
 * The pace recent runs measured (the median of their factors), or the reference where none can,
 * for a run that starts its partitions in groups or not (`grouped`): a factor measured on runs
 * of either kind scales the reference of the planned run's kind.
 */
export function paceFrom(runs: RunTiming[], grouped: boolean): OrchestrationPace {
  const reference = referencePace(grouped);
  const measured = runs.map((r) => ({ r, k: paceFactor(r) })).filter((m): m is { r: RunTiming; k: number } => m.k !== undefined);
  if (measured.length === 0) return reference;
  const factors = measured.map((m) => m.k).sort((a, b) => a - b);
  const mid = factors.length >> 1;
  const factor = factors.length % 2 === 1 ? factors[mid] : (factors[mid - 1] + factors[mid]) / 2;
  const newest = measured.reduce((a, m) => (m.r.finishedAt > a ? m.r.finishedAt : a), measured[0].r.finishedAt);
  return {
    slotMs: reference.slotMs * factor,
    msPerPartition: reference.msPerPartition * factor,
    grouped,
    basis: { kind: 'measured', factor, runs: measured.length, newest },
  };
}

/** What the projection assumes about Temporal, in the plan's words. */
export function describePace(pace: OrchestrationPace): string {
  const started = pace.grouped ? `, the partitions started in groups of up to ${GROUP_SIZE} (small partitions of a run of many)` : '';
  const figures = `Temporal holding each partition's slot about ${Math.round(pace.slotMs)} ms besides its database work, and orchestrating at most one partition every ${Math.round(pace.msPerPartition)} ms${started}`;
  // the production server against the dev server: about 2 × a partition workflow, 1.0–1.26 × grouped (bench/RESULTS.md)
  const production = pace.grouped ? 'up to about a quarter more' : 'about twice that';
  if (pace.basis.kind === 'reference')
    return `${figures}, as a dev server on a 2-core machine does (no recent undisturbed run of ${PACE_HISTORY.minPartitions} partitions or more in this database's ledger, or none this role may read, to measure this deployment by; a server on PostgreSQL persistence takes ${production})`;
  const { factor, runs, newest } = pace.basis;
  return `${figures}: ${factor.toFixed(2)} × the reference, as measured from the ${runs === 1 ? 'last undisturbed run' : `last ${runs} undisturbed runs`} in this database's ledger (the newest finished ${newest.toISOString()})`;
}
