/**
 * What a plan will cost and change, measured before anything is written: the rows in scope
 * (counted where the source is small enough, else the planner's estimate, marked so), the
 * bytes read, and a few deterministic sample chunks spread over the scope (first, middle and
 * last partition), recomputed read-only and compared with the target: how long the transform
 * takes per row, how many rows would be inserted, updated or left as they are, and some of
 * the rows themselves, current beside computed. With `measureWrites`, the samples are also
 * written for real in a transaction that is rolled back, timing the writes and measuring the
 * WAL they produce. Temporal's part of a partition comes from the recent runs in this database's
 * ledger where it holds some (orchestration-pace.ts). The projection (estimate-projection.ts) is
 * simple arithmetic over these, and says what binds it.
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import { undoKeep } from '../specs/resolve';
import type { PlannedPartition } from '../domain/types';
import type { LoadedSpec } from '../specs/load';
import type { RunShape } from '../compiler/shape';
import { scopeRows } from '../preflight/scope-rows';
import { compileRun } from '../compiler/statements';
import { evaluateArtifact } from '../transforms/artifact';
import { outputTypes, type Recomputable } from '../gates/compare';
import { measureParallelism, samplePartitions, sampleWork, type RowPreview } from './estimate-sample';
import { project, type Projection, type ScopeFacts } from './estimate-projection';
import { recentUndisturbedRuns } from '../ledger/run-timings';
import { PACE_HISTORY, paceFrom } from './orchestration-pace';
import { startsInGroups } from '../domain/partition-average';

export { samplePartitions, type RowPreview } from './estimate-sample';

export interface PlanEstimate {
  scope: ScopeFacts;
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
  projected: Projection;
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
  // the run will start small partitions of many in groups (workflows/run-state.ts groupSize), if its transform is SQL
  const grouped = spec.transform.module === undefined && startsInGroups(scope.rows, input.partitions.length, spec.limits.chunkSize);
  const pace = paceFrom(await recentUndisturbedRuns(pool, PACE_HISTORY), grouped);
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
    projected: project(spec, input.partitions.length, scope, work, { parallel, countSeconds, checkSeconds: options.checkSeconds ?? 0, pace }),
    preview: work.preview,
  };
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
