/**
 * The samples a plan's estimate is measured on: a few deterministic chunks spread over the
 * scope (first, middle and last partition), recomputed read-only and compared with the target;
 * with `measureWrites`, also written for real in a transaction that is rolled back. And how many
 * partitions the database really works on at once. Part of estimate-plan.ts.
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import { inTransaction } from '../db/pool';
import { readOutputKeyRange } from '../db/output-key-range';
import type { PlannedPartition } from '../domain/types';
import { undoKeep } from '../specs/resolve';
import { moduleOutput } from '../transforms/module-fill';
import { comparePartition, readOnly, type Recomputable } from '../gates/compare';
import { sampleImageTable, storedImageBytes } from '../undo/sample-images';

const SAMPLE_PARTITIONS = 3;
const SAMPLE_ROWS = 2000;
const PREVIEW_ROWS = 5;
const SAMPLE_TIMEOUT_MS = 30_000;
const MAX_PARALLEL_PROBE = 8;
const WARM_UP_ROWS = 1;
const PARALLEL_PROBE_ROUNDS = 3;

export interface RowPreview {
  key: string;
  change: 'insert' | 'update';
  /** The target row now (output columns only); null for an insert. */
  current: Record<string, unknown> | null;
  computed: Record<string, unknown>;
  /** Output columns whose value would change. */
  changed: string[];
}

/** What the sampled chunks showed, summed. */
export interface SampledWork {
  rows: number;
  computeMs: number;
  inserts: number;
  updates: number;
  preview: RowPreview[];
  /** With measureWrites: the writes, timed, their WAL, the target's growth and the images they kept. */
  written?: WriteSample;
}

/** Recomputes (and with `measureWrites` writes, then rolls back) a sample chunk of each picked partition. */
export async function sampleWork(pool: pg.Pool, ctx: Recomputable, picks: PlannedPartition[], types: string[], measureWrites: boolean): Promise<SampledWork> {
  const work: SampledWork = { rows: 0, computeMs: 0, inserts: 0, updates: 0, preview: [] };
  const written: WriteSample = { ms: 0, walBytes: 0, storageBytes: 0, imageRows: 0, imageBytes: 0 };
  if (picks.length > 0) await warmSession(pool, ctx, picks[0], types, measureWrites);
  for (const p of picks) {
    const started = performance.now();
    const c = await comparePartition(pool, ctx, p.bounds, {
      pageRows: SAMPLE_ROWS,
      timeoutMs: SAMPLE_TIMEOUT_MS,
      types,
      slice: { cursor: null, rows: SAMPLE_ROWS },
    });
    work.computeMs += performance.now() - started;
    work.rows += c.compared;
    work.inserts += ctx.spec.target.mode === 'update' ? 0 : c.missing;
    work.updates += c.differing;
    if (work.preview.length < PREVIEW_ROWS && c.missing + c.differing > 0)
      work.preview.push(...(await previewRows(pool, ctx, p, types, PREVIEW_ROWS - work.preview.length)));
    if (measureWrites) {
      const w = await measureWrite(pool, ctx, p);
      for (const k of Object.keys(written) as (keyof WriteSample)[]) written[k] += w[k];
    }
  }
  return measureWrites ? { ...work, written } : work;
}

/**
 * How many partitions the database really works on at once: slices of the sampled partitions
 * recomputed one at a time, then `want` at the same time on their own connections. A server
 * with fewer free cores than the spec's concurrency runs partitions partly in turn, and the
 * projection must too. Slices of a chunk's size (at most 10,000 rows), so that connection and
 * round-trip costs do not pass for the database's work.
 */
export async function measureParallelism(
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
  const slice = (i: number, n = rows) =>
    comparePartition(pool, ctx, picks[i % picks.length].bounds, { pageRows: n, timeoutMs: SAMPLE_TIMEOUT_MS, types, slice: { cursor: null, rows: n } });
  // replace mode recomputes whole partitions whatever the slice: one round, as the sample itself
  const whole = ctx.spec.target.mode === 'replace';
  // k sessions at once, each new one loading its catalogs first: a cost the run's workers paid
  // long before, and one that made k sessions look barely faster than one
  if (!whole) await Promise.all(Array.from({ length: k }, (_, i) => slice(i, WARM_UP_ROWS)));
  // each way's fastest of a few rounds: one round is a tenth of a second, where one stall of
  // the server's moved the answer between 1.3 and 1.9 partitions at a time on two cores
  let sequential = Infinity;
  let together = Infinity;
  for (let round = 0; round < (whole ? 1 : PARALLEL_PROBE_ROUNDS); round++) {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) await slice(i);
    sequential = Math.min(sequential, performance.now() - t0);
    const t1 = performance.now();
    await Promise.all(Array.from({ length: k }, (_, i) => slice(i)));
    together = Math.min(together, performance.now() - t1);
  }
  const speedup = sequential / together;
  // measured up to k at once; where k was not enough to find the limit, the spec's concurrency is taken at its word
  return Math.max(1, Math.min(want, speedup >= k * 0.9 ? want : speedup));
}

/**
 * A session's first statements over these tables load their catalog entries and plans, which
 * a worker's sessions hold from their first chunk on: a few milliseconds, on a sample of a few
 * milliseconds. A one-row slice (and write, rolled back) pays them before anything is timed,
 * and reads one page, so the sample still finds the rest of its rows where the run will.
 */
async function warmSession(pool: pg.Pool, ctx: Recomputable, pick: PlannedPartition, types: string[], measureWrites: boolean): Promise<void> {
  // replace mode recomputes a whole partition whatever the slice: no warm-up is that cheap
  if (ctx.spec.target.mode === 'replace') return;
  await comparePartition(pool, ctx, pick.bounds, { pageRows: WARM_UP_ROWS, timeoutMs: SAMPLE_TIMEOUT_MS, types, slice: { cursor: null, rows: WARM_UP_ROWS } });
  if (measureWrites) await measureWrite(pool, ctx, pick, WARM_UP_ROWS);
}

/** First, middle and last partition: deterministic, and spread over the scope. */
export function samplePartitions(partitions: PlannedPartition[]): PlannedPartition[] {
  if (partitions.length <= SAMPLE_PARTITIONS) return partitions;
  const at = new Set([0, Math.floor((partitions.length - 1) / 2), partitions.length - 1]);
  return [...at].map((i) => partitions[i]);
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

export interface WriteSample {
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
function measureWrite(pool: pg.Pool, ctx: Recomputable, p: PlannedPartition, rows = SAMPLE_ROWS): Promise<WriteSample> {
  return inTransaction(pool, { statementTimeoutMs: SAMPLE_TIMEOUT_MS, end: 'rollback' }, async (client) => {
    await client.query(ctx.compiled.createOutputTable);
    const b = ctx.compiled.chunkBounds(p.bounds, null, rows);
    const { rows: range } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
    if (range[0].n === 0) return { ms: 0, walBytes: 0, storageBytes: 0, imageRows: 0, imageBytes: 0 };
    const fill = ctx.module
      ? ctx.compiled.fillFromJson(JSON.stringify(await moduleOutput(client, { ...ctx, module: ctx.module }, p.bounds, null, range[0].hi)))
      : ctx.compiled.fillFromSql(p.bounds, null, range[0].hi);
    const outputRows = (await client.query(fill.text, fill.values)).rowCount ?? 0;
    const images = undoKeep(ctx.spec) !== null ? await sampleImageTable(client, ctx) : null;
    // the write alone: computing the rows was timed by the comparison
    const target = quoteTable(ctx.spec.target.table);
    const { rows: was } = await client.query<{ lsn: string; size: string }>(
      'SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_total_relation_size($1::regclass) AS size',
      [target],
    );
    // a chunk's SQL fill answers the key range itself: read here, it is not the write's time
    const keys = await readOutputKeyRange(client, ctx.compiled);
    const started = performance.now();
    let imageRows = 0;
    if (images)
      for (const c of images.compiled.capture(images.tables, p.bounds, keys, outputRows))
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
      imageBytes: images ? await storedImageBytes(client, images) : 0,
    };
  });
}
