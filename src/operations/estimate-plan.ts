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
import { sampleImageTable, storedImageBytes } from './sample-images';
import { undoKeep } from '../specs/resolve';
import { inTransaction } from '../db/pool';
import type { PlannedPartition } from '../shared/types';
import type { LoadedSpec } from '../specs/load';
import type { RunShape } from '../compiler/shape';
import { scopeRows } from '../checks/scope-rows';
import { compileRun } from '../compiler/statements';
import { readOutputKeyRange } from '../db/output-key-range';
import { evaluateArtifact } from '../transforms/artifact';
import { moduleOutput } from '../transforms/module-fill';
import { comparePartition, outputTypes, readOnly, type Recomputable } from '../validation/compare';
import { finalSampleEvery } from '../validation/gates';

const SAMPLE_PARTITIONS = 3;
const SAMPLE_ROWS = 2000;
const PREVIEW_ROWS = 5;
const SAMPLE_TIMEOUT_MS = 30_000;
const MAX_PARALLEL_PROBE = 8;
/**
 * Temporal's part per partition (child workflow, activity, reports), in slot time: 44 ms
 * measured for one-row partitions at concurrency 20 (docs/benchmarks.md, "Small partitions").
 */
export const ORCHESTRATION_MS_PER_PARTITION = 45;
/** Starting the run workflow and finishing it (finalize, the ledger's proof), beside its checks. */
const RUN_START_AND_FINISH_SECONDS = 0.3;
/** The final check's own cost per partition (its slice's bounds, a transaction, the tally). */
const FINAL_CHECK_MS_PER_PARTITION = 5;

export interface RowPreview {
  key: string;
  change: 'insert' | 'update';
  /** The target row now (output columns only); null for an insert. */
  current: Record<string, unknown> | null;
  computed: Record<string, unknown>;
  /** Output columns whose value would change. */
  changed: string[];
}

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
  let rows = 0;
  let computeMs = 0;
  let inserts = 0;
  let updates = 0;
  const preview: RowPreview[] = [];
  let writeMs = 0;
  let walBytes = 0;
  let storageBytes = 0;
  let imageRows = 0;
  let imageBytes = 0;
  const keep = undoKeep(spec);
  for (const p of picks) {
    const started = performance.now();
    const c = await comparePartition(pool, ctx, p.bounds, {
      pageRows: SAMPLE_ROWS,
      timeoutMs: SAMPLE_TIMEOUT_MS,
      types,
      slice: { cursor: null, rows: SAMPLE_ROWS },
    });
    computeMs += performance.now() - started;
    rows += c.compared;
    inserts += spec.target.mode === 'update' ? 0 : c.missing;
    updates += c.differing;
    if (preview.length < PREVIEW_ROWS && c.missing + c.differing > 0) preview.push(...(await previewRows(pool, ctx, p, types, PREVIEW_ROWS - preview.length)));
    if (options.measureWrites) {
      const w = await measureWrite(pool, ctx, p);
      writeMs += w.ms;
      walBytes += w.walBytes;
      storageBytes += w.storageBytes;
      imageRows += w.imageRows;
      imageBytes += w.imageBytes;
    }
  }
  const unchanged = rows - inserts - updates;
  const parallel = await measureParallelism(pool, ctx, picks, types, Math.min(spec.limits.concurrency, input.partitions.length), spec.limits.chunkSize);
  const share = (n: number) => (rows > 0 ? n / rows : 0);
  const computeSeconds = rows > 0 ? (scope.rows * (computeMs / rows)) / 1000 / parallel : 0;
  const projectedInserts = Math.round(scope.rows * share(inserts));
  const projectedUpdates = Math.round(scope.rows * share(updates));
  const writeSeconds = options.measureWrites && rows > 0 ? (scope.rows * (writeMs / rows)) / 1000 / parallel : undefined;
  // Temporal's hops run beside the database's work (other partitions compute meanwhile): they
  // set the pace only when they take longer, spread over every concurrency slot
  const slots = Math.max(1, Math.min(spec.limits.concurrency, input.partitions.length));
  const orchestrationSeconds = (input.partitions.length * ORCHESTRATION_MS_PER_PARTITION) / 1000 / slots;
  const databaseSeconds = computeSeconds + (writeSeconds ?? 0);
  // `start` runs this plan's checks, and registering runs them again and counts the scope; the
  // final check recomputes its share of every partition, one partition after another
  const sampleEvery = finalSampleEvery(spec.validate);
  const perRowMs = rows > 0 ? computeMs / rows : 0;
  const finalSeconds = sampleEvery === 0 ? 0 : ((scope.rows / sampleEvery) * perRowMs) / 1000 + (input.partitions.length * FINAL_CHECK_MS_PER_PARTITION) / 1000;
  const fixedSeconds = 2 * (options.checkSeconds ?? 0) + countSeconds + finalSeconds + RUN_START_AND_FINISH_SECONDS;
  let durationSeconds = Math.max(databaseSeconds, orchestrationSeconds) + fixedSeconds;
  const at = `${parallel.toFixed(1).replace(/\.0$/, '')} partitions' work at a time (measured)`;
  let bindingLimit =
    orchestrationSeconds > databaseSeconds
      ? `orchestration: ${input.partitions.length} partitions at about ${ORCHESTRATION_MS_PER_PARTITION} ms each, ${slots} at a time`
      : options.measureWrites
        ? `the database: ${at}`
        : `reading and transforming, ${at}; writes not measured`;
  if (spec.limits.rowsPerSecond) {
    // every row read counts against the cap, written or not
    const capped = scope.rows / spec.limits.rowsPerSecond;
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
  return {
    scope,
    sample: {
      partitions: picks.map((p) => p.id),
      rows,
      computeMs: Math.round(computeMs),
      inserts,
      updates,
      unchanged,
      ...(options.measureWrites ? { writeMs: Math.round(writeMs), walBytes, storageBytes, ...(keep !== null ? { imageRows, imageBytes } : {}) } : {}),
    },
    projected: {
      inserts: projectedInserts,
      updates: projectedUpdates,
      unchanged: scope.rows - projectedInserts - projectedUpdates,
      computeSeconds,
      orchestrationSeconds,
      fixedSeconds,
      ...(writeSeconds !== undefined
        ? {
            writeSeconds,
            walBytes: rows > 0 ? Math.round(scope.rows * (walBytes / rows)) : 0,
            storageBytes: rows > 0 ? Math.round(scope.rows * (storageBytes / rows)) : 0,
          }
        : {}),
      ...(keep !== null
        ? {
            images: {
              rows: projectedInserts + projectedUpdates,
              // bytes per image as the samples stored them, for every row the run will change
              ...(options.measureWrites ? { bytes: imageRows > 0 ? Math.round((projectedInserts + projectedUpdates) * (imageBytes / imageRows)) : 0 } : {}),
              keep,
            },
          }
        : {}),
      durationSeconds,
      bindingLimit,
      lowerBound: !options.measureWrites,
    },
    preview,
  };
}

/**
 * How many partitions the database really works on at once: slices of the sampled partitions
 * recomputed one at a time, then `want` at the same time on their own connections. A server
 * with fewer free cores than the spec's concurrency runs partitions partly in turn, and the
 * projection must too. Slices of a chunk's size (at most 10,000 rows), so that connection and
 * round-trip costs do not pass for the database's work.
 */
async function measureParallelism(
  pool: pg.Pool,
  ctx: Recomputable,
  picks: PlannedPartition[],
  types: string[],
  want: number,
  chunkSize: number,
): Promise<number> {
  const k = Math.max(1, Math.min(want, MAX_PARALLEL_PROBE, (pool.options.max ?? 10) - 1));
  if (k <= 1 || picks.length === 0) return 1;
  const rows = Math.min(chunkSize, 10_000);
  const slice = (i: number) =>
    comparePartition(pool, ctx, picks[i % picks.length].bounds, { pageRows: rows, timeoutMs: SAMPLE_TIMEOUT_MS, types, slice: { cursor: null, rows } });
  const t0 = performance.now();
  for (let i = 0; i < k; i++) await slice(i);
  const sequential = performance.now() - t0;
  const t1 = performance.now();
  await Promise.all(Array.from({ length: k }, (_, i) => slice(i)));
  const together = performance.now() - t1;
  const speedup = sequential / together;
  // measured up to k at once; where k was not enough to find the limit, the spec's concurrency is taken at its word
  return Math.max(1, Math.min(want, speedup >= k * 0.9 ? want : speedup));
}

/** First, middle and last partition: deterministic, and spread over the scope. */
export function samplePartitions(partitions: PlannedPartition[]): PlannedPartition[] {
  if (partitions.length <= SAMPLE_PARTITIONS) return partitions;
  const at = new Set([0, Math.floor((partitions.length - 1) / 2), partitions.length - 1]);
  return [...at].map((i) => partitions[i]);
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

/** A few rows the sample would change, current beside computed. */
async function previewRows(pool: pg.Pool, ctx: Recomputable, p: PlannedPartition, types: string[], limit: number): Promise<RowPreview[]> {
  return readOnly(pool, SAMPLE_TIMEOUT_MS, async (client) => {
    const b = ctx.compiled.chunkBounds(p.bounds, null, SAMPLE_ROWS);
    const { rows: range } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
    if (range[0].n === 0) return [];
    let statement;
    if (ctx.module) {
      statement = ctx.compiled.previewFromJson(
        JSON.stringify(await moduleOutput(client, { ...ctx, module: ctx.module }, p.bounds, null, range[0].hi)),
        types,
        limit,
      );
    } else {
      statement = ctx.compiled.previewFromSql(p.bounds, null, range[0].hi, types, limit);
    }
    const { rows } = await client.query<{ key: string; current: Record<string, unknown> | null; computed: Record<string, unknown> }>(
      statement.text,
      statement.values,
    );
    const columns = ctx.run.shape.outputColumns;
    return rows.map((r) => {
      const current = r.current && Object.fromEntries(columns.map((c) => [c, r.current![c]]));
      const changed = columns.filter((c) => !current || JSON.stringify(current[c]) !== JSON.stringify(r.computed[c]));
      return { key: r.key, change: current ? 'update' : 'insert', current, computed: r.computed, changed };
    });
  });
}

interface WriteSample {
  ms: number;
  walBytes: number;
  storageBytes: number;
  imageRows: number;
  imageBytes: number;
}

/**
 * One sample chunk written for real, then rolled back: the time its writes take, the WAL they
 * produce, and — when the run keeps before-images — the images it would keep, taken as a chunk
 * takes them (into a table where the run's would go, so their WAL counts; a temporary one when
 * this role may not create there).
 */
function measureWrite(pool: pg.Pool, ctx: Recomputable, p: PlannedPartition): Promise<WriteSample> {
  return inTransaction(pool, { statementTimeoutMs: SAMPLE_TIMEOUT_MS, end: 'rollback' }, async (client) => {
    await client.query(ctx.compiled.createOutputTable);
    const b = ctx.compiled.chunkBounds(p.bounds, null, SAMPLE_ROWS);
    const { rows: range } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
    if (range[0].n === 0) return { ms: 0, walBytes: 0, storageBytes: 0, imageRows: 0, imageBytes: 0 };
    if (ctx.module) {
      const fill = ctx.compiled.fillFromJson(JSON.stringify(await moduleOutput(client, { ...ctx, module: ctx.module }, p.bounds, null, range[0].hi)));
      await client.query(fill.text, fill.values);
    } else {
      const fill = ctx.compiled.fillFromSql(p.bounds, null, range[0].hi);
      await client.query(fill.text, fill.values);
    }
    const images = undoKeep(ctx.spec) !== null ? await sampleImageTable(client, ctx) : null;
    // the write alone: computing the rows was timed by the comparison
    const target = quoteTable(ctx.spec.target.table);
    const { rows: was } = await client.query<{ lsn: string; size: string }>(
      'SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_total_relation_size($1::regclass) AS size',
      [target],
    );
    const started = performance.now();
    const keys = await readOutputKeyRange(client, ctx.compiled);
    let imageRows = 0;
    if (images)
      for (const c of images.compiled.capture(images.tables, p.bounds, keys))
        imageRows += (await client.query<{ imaged: number }>(c.text, c.values)).rows[0].imaged;
    for (const w of ctx.compiled.write(p.bounds, keys)) await client.query(w.text, w.values);
    const ms = performance.now() - started;
    const { rows: now } = await client.query<{ bytes: string; size: string }>(
      'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint AS bytes, pg_total_relation_size($2::regclass) AS size',
      [was[0].lsn, target],
    );
    return {
      ms,
      walBytes: Number(now[0].bytes),
      storageBytes: Number(now[0].size) - Number(was[0].size),
      imageRows,
      imageBytes: images ? await storedImageBytes(client, images.tables.table) : 0,
    };
  });
}
