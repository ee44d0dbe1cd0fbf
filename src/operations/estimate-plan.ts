/**
 * What a plan will cost and change, measured before anything is written: the rows in scope
 * (counted where the source is small enough, else the planner's estimate, marked so), the
 * bytes read, and a few deterministic sample chunks spread over the scope (first, middle and
 * last partition), recomputed read-only and compared with the target: how long the transform
 * takes per row, how many rows would be inserted, updated or left as they are, and some of
 * the rows themselves, current beside computed. With `measureWrites`, the samples are also
 * written for real in a transaction that is rolled back, timing the writes and measuring the
 * WAL they produce. The projection is simple arithmetic over these, and says what binds it.
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import { undoKeep, type ResolvedSpec } from '../specs/resolve';
import type { PlannedPartition } from '../domain/types';
import type { LoadedSpec } from '../specs/load';
import type { RunShape } from '../compiler/shape';
import { scopeRows } from '../preflight/scope-rows';
import { compileRun } from '../compiler/statements';
import { evaluateArtifact } from '../transforms/artifact';
import { outputTypes, type Recomputable } from '../gates/compare';
import { finalSampleEvery } from '../gates/gate-checks';
import { MAX_CHECK_CONCURRENCY } from '../domain/limits';
import { measureParallelism, samplePartitions, sampleWork, type RowPreview, type SampledWork } from './estimate-sample';

export { samplePartitions, type RowPreview } from './estimate-sample';

/**
 * Temporal's part of a partition (its child workflow, activity and report) as it holds a
 * concurrency slot: 109 ms for one-row partitions at concurrency 6 on the dev server `demo`
 * starts, with its fast task hand-offs (src/dev/services.ts; bench/RESULTS.md, "Small
 * partitions"; 230–320 ms with Temporal's defaults). A partition's database work adds to it in its slot.
 */
export const ORCHESTRATION_SLOT_MS = 110;
/**
 * The most partitions that dev server orchestrates a second, however many are in flight: one
 * every 18 ms at concurrency 6 on the same machine (every 21 ms at 20, slot time 425 ms, as the
 * machine's two cores saturate).
 */
export const ORCHESTRATION_MS_PER_PARTITION = 18;
/** Starting the run workflow and finishing it (finalize, the ledger's proof), beside its checks. */
const RUN_START_AND_FINISH_SECONDS = 0.3;
/** The final check's own cost per partition (its slice's bounds, a transaction, the tally). */
const FINAL_CHECK_MS_PER_PARTITION = 5;

export interface PlanEstimate {
  scope: { rows: number; exact: boolean; rowsPerPartition: number; bytesRead: number | null };
  sample: {
    partitions: string[];
    rows: number;
    computeMs: number;
    inserts: number;
    updates: number;
    unchanged: number;
    writeMs?: number;
    walBytes?: number;
    storageBytes?: number;
    /** Before-images the written samples kept, and their bytes on disk; measured only with measureWrites. */
    imageRows?: number;
    imageBytes?: number;
  };
  projected: {
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
  };
  preview: RowPreview[];
}

export interface EstimateInput {
  loaded: LoadedSpec;
  shape: RunShape;
  partitions: PlannedPartition[];
}

export interface EstimateOptions {
  measureWrites?: boolean;
  /** How long this plan's checks took: a worker runs the same checks to register the run. */
  checkSeconds?: number;
}

export async function estimatePlan(pool: pg.Pool, input: EstimateInput, options: EstimateOptions = {}): Promise<PlanEstimate> {
  const spec = input.loaded.resolved;
  const ctx = recomputable(input);
  const counting = performance.now();
  const scope = await scopeOf(pool, input, ctx.module?.reads);
  const countSeconds = (performance.now() - counting) / 1000;
  const types = await outputTypes(pool, ctx);
  const picks = samplePartitions(input.partitions);
  const work = await sampleWork(pool, ctx, picks, types, options.measureWrites === true);
  const parallel = await measureParallelism(pool, ctx, picks, types, Math.min(spec.limits.concurrency, input.partitions.length), spec.limits.chunkSize);
  const keep = undoKeep(spec);
  const w = work.written;
  return {
    scope,
    sample: {
      partitions: picks.map((p) => p.id),
      rows: work.rows,
      computeMs: Math.round(work.computeMs),
      inserts: work.inserts,
      updates: work.updates,
      unchanged: work.rows - work.inserts - work.updates,
      ...(w
        ? {
            writeMs: Math.round(w.ms),
            walBytes: w.walBytes,
            storageBytes: w.storageBytes,
            ...(keep !== null ? { imageRows: w.imageRows, imageBytes: w.imageBytes } : {}),
          }
        : {}),
    },
    projected: project(spec, input.partitions.length, scope, work, { parallel, countSeconds, checkSeconds: options.checkSeconds ?? 0 }),
    preview: work.preview,
  };
}

/** The whole run, from the sample: rows, bytes and seconds scaled to the scope, and what binds the duration. */
function project(
  spec: ResolvedSpec,
  partitions: number,
  scope: PlanEstimate['scope'],
  work: SampledWork,
  measured: { parallel: number; countSeconds: number; checkSeconds: number },
): PlanEstimate['projected'] {
  const { rows } = work;
  const { parallel } = measured;
  const w = work.written;
  const perRow = (n: number) => (rows > 0 ? scope.rows * (n / rows) : 0);
  const computeSeconds = perRow(work.computeMs) / 1000 / parallel;
  const inserts = Math.round(perRow(work.inserts));
  const updates = Math.round(perRow(work.updates));
  const writeSeconds = w && rows > 0 ? perRow(w.ms) / 1000 / parallel : undefined;
  const slots = Math.max(1, Math.min(spec.limits.concurrency, partitions));
  // Temporal's part: each partition holds a slot for its hops, and the server has a rate of its own
  const orchestrationSeconds = (partitions * Math.max(ORCHESTRATION_SLOT_MS / slots, ORCHESTRATION_MS_PER_PARTITION)) / 1000;
  const databaseSeconds = computeSeconds + (writeSeconds ?? 0);
  // in its slot, a partition's hops and its database work follow one another; the database's
  // work of all partitions (as it ran `parallel` at a time) spreads over the slots
  const slotSeconds = (partitions * ORCHESTRATION_SLOT_MS) / 1000 / slots + (databaseSeconds * parallel) / slots;
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
        return `orchestration: ${partitions} partitions at about ${ORCHESTRATION_MS_PER_PARTITION} ms each, the most Temporal starts and reports a second`;
      if (paced === slotSeconds && slotSeconds > databaseSeconds)
        return `orchestration: ${partitions} partitions, ${slots} at a time (limits.concurrency), each holding its slot about ${ORCHESTRATION_SLOT_MS} ms for Temporal besides its database work`;
      return w ? `the database: ${at}` : `reading and transforming, ${at}; writes not measured`;
    })(),
  );
  const keep = undoKeep(spec);
  const assumes = [
    `${slots} partitions in flight (limits.concurrency), on workers with at least ${slots} activity slots between them (BACKFILL_MAX_ACTIVITIES)`,
    `the database as busy as during the sample, and able to run ${at.replace(' (measured)', '')}`,
    `Temporal holding each partition's slot about ${ORCHESTRATION_SLOT_MS} ms besides its database work, and orchestrating at most one partition every ${ORCHESTRATION_MS_PER_PARTITION} ms, as the dev server that demo starts does (a server on PostgreSQL persistence takes about 1.8–2.1 times that)`,
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

function recomputable({ loaded, shape }: EstimateInput): Recomputable {
  const spec = loaded.resolved;
  const run = { shape, transform_name: spec.transform.name, transform_version: spec.transform.version };
  const compiled = compileRun(spec, shape);
  if (!loaded.artifact) return { run, spec, compiled };
  return { run, spec, compiled, module: evaluateArtifact(loaded.artifact, loaded.transform.modulePath!) };
}

/** The rows in scope (counted or estimated), and the bytes read from the columns' average widths. */
async function scopeOf(pool: pg.Pool, { loaded, partitions }: EstimateInput, readColumns: string[] | undefined): Promise<PlanEstimate['scope']> {
  const spec = loaded.resolved;
  const { rows, exact } = await scopeRows(pool, spec);
  // a SQL transform reads whole source rows (chunk is s.*); a module reads its `reads`, or all
  const { rows: width } = await pool.query<{ w: number | null }>(
    `SELECT sum(st.avg_width)::int AS w FROM pg_stats st
       JOIN pg_namespace n ON n.nspname = st.schemaname
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = st.tablename
      WHERE c.oid = to_regclass($1) AND ($2::text[] IS NULL OR st.attname = ANY($2))`,
    [quoteTable(spec.source.table), readColumns ?? null],
  );
  return {
    rows,
    exact,
    rowsPerPartition: partitions.length > 0 ? Math.round(rows / partitions.length) : 0,
    bytesRead: width[0].w === null ? null : width[0].w * rows,
  };
}
