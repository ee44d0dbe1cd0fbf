/**
 * Recompute and compare: the transform run again, read-only, over a partition's source rows
 * (all of them, or one slice of its keys), and its output compared row by row
 * with what the target holds now. This is what `backfill verify`, the canary gate and the
 * whole-run check share. It writes nothing: every page is one read-only, time-limited
 * REPEATABLE READ transaction, so the recomputed input and the target are one snapshot.
 */
import type { ResolvedSpec } from '../specs/resolve';
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import { isPgError } from '../db/errors';
import { inTransaction } from '../db/pool';
import type { RunRow } from '../ledger/runs';
import type { PartitionBounds } from '../domain/types';
import { querySingle } from '../db/session';
import type { CompiledRun, Statement } from '../compiler/statements';
import type { TransformModule } from '../transforms/define';
import { fillFromModule, moduleOutput, type ModuleRun } from '../transforms/module-fill';

export interface Comparison {
  /** Output rows compared with the target. */
  compared: number;
  /** Output rows whose key the target lacks (update mode: skipped, not wrong). */
  missing: number;
  /** Output rows the target holds with other values. */
  differing: number;
  /** Replace mode: target rows of the partition the transform does not produce. */
  extra: number;
  /** Keys of wrong rows (row data: ledger and operator only). */
  examples: string[];
  /** Key ranges that hold wrong rows, in words. */
  ranges: string[];
}

export interface Recomputable {
  run: Pick<RunRow, 'shape' | 'transform_name' | 'transform_version'>;
  spec: ResolvedSpec;
  compiled: CompiledRun;
  module?: TransformModule;
}

export const MAX_EXAMPLES = 20;

export function wrongRows(c: Comparison, mode: string): number {
  return c.differing + c.extra + (mode === 'update' ? 0 : c.missing);
}

/** format_type() of each output column in the target, in output order: the recomputed rows are cast to them. */
export async function outputTypes(db: pg.Pool | pg.PoolClient, ctx: Recomputable): Promise<string[]> {
  const { rows } = await db.query<{ attname: string; type: string }>(
    `SELECT attname, format_type(atttypid, atttypmod) AS type FROM pg_attribute
      WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [quoteTable(ctx.spec.target.table)],
  );
  const byName = new Map(rows.map((r) => [r.attname, r.type]));
  return ctx.run.shape.outputColumns.map((c) => {
    const type = byName.get(c);
    if (!type) throw new Error(`target ${ctx.spec.target.table} no longer has column ${c}; the run's shape cannot be verified`);
    return type;
  });
}

export interface CompareOptions {
  /** Source keys per page (one transaction each). */
  pageRows: number;
  timeoutMs: number;
  types: string[];
  /** Called after each page, so a long comparison can heartbeat. */
  onPage?: () => void;
  /** Compare only this slice: `rows` source keys after `cursor` (null: from the partition's start); else every key. */
  slice?: { cursor: string | null; rows: number };
}

export async function comparePartition(pool: pg.Pool, ctx: Recomputable, bounds: PartitionBounds, opts: CompareOptions): Promise<Comparison> {
  const total: Comparison = { compared: 0, missing: 0, differing: 0, extra: 0, examples: [], ranges: [] };
  const mode = ctx.spec.target.mode;
  // replace mode computes a partition as a whole (a rollup must see all of its rows)
  const whole = mode === 'replace';
  // keys still to compare: the slice's, or all of them
  let budget = opts.slice && !whole ? opts.slice.rows : Infinity;
  let pageRows = Math.max(1, Math.min(opts.pageRows, budget));
  let cursor: string | null = whole ? null : (opts.slice?.cursor ?? null);
  for (;;) {
    const limit = Math.min(pageRows, budget);
    let page;
    try {
      page = await comparePage(limit);
    } catch (err) {
      // a page the transform cannot recompute within limits.statementTimeoutSeconds is tried
      // smaller, as the run's own chunks were; one key at a time is the floor
      if (!isPgError(err) || err.code !== '57014' || whole || pageRows === 1) throw err;
      pageRows = Math.ceil(pageRows / 2);
      continue;
    }
    if (page.result) {
      const r = page.result;
      const c = { compared: Number(r.compared), missing: Number(r.missing), differing: Number(r.differing), extra: Number(r.extra) };
      total.compared += c.compared;
      total.missing += c.missing;
      total.differing += c.differing;
      total.extra += c.extra;
      if (wrongRows({ ...c, examples: [], ranges: [] }, mode) > 0) {
        total.ranges.push(ctx.compiled.describeRange(bounds, cursor, page.hi));
        total.examples.push(...(r.examples ?? []).slice(0, MAX_EXAMPLES - total.examples.length));
      }
    }
    opts.onPage?.();
    budget -= page.n;
    if (whole || page.n < limit || budget <= 0) return total;
    cursor = page.hi;
  }

  async function comparePage(limit: number) {
    return readOnly(pool, opts.timeoutMs, async (client) => {
      let hi: string | null = null;
      let n = 0;
      if (!whole) {
        const b = ctx.compiled.chunkBounds(bounds, cursor, limit);
        const { rows } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
        n = rows[0].n;
        hi = rows[0].hi;
        if (n === 0) return { n, hi, result: undefined };
      }
      const statement = ctx.module
        ? await recomputeInNode(client, { ...ctx, module: ctx.module }, bounds, cursor, hi, opts.types, whole)
        : ctx.compiled.compareFromSql(bounds, cursor, hi, opts.types);
      const { rows } = await querySingle<{ compared: string; missing: string; differing: string; extra: string; examples: string[] | null }>(
        client,
        statement.text,
        statement.values,
      );
      return { n, hi, result: rows[0] };
    });
  }
}

/**
 * The comparison of a TypeScript transform's output, recomputed in Node. A session that ran the
 * run's chunks has its output table, empty outside a chunk (ON COMMIT DELETE ROWS): the output
 * goes there as a chunk's does, COPY text where it can (a temporary table takes writes in a
 * read-only transaction, and the rollback empties it again). Any other session — `verify`'s, a
 * check's on a fresh connection — sends it as one JSON document, which PostgreSQL parses about
 * five times slower and which creates nothing.
 */
async function recomputeInNode(
  client: pg.PoolClient,
  ctx: ModuleRun,
  bounds: PartitionBounds,
  cursor: string | null,
  hi: string | null,
  types: string[],
  whole: boolean,
): Promise<Statement> {
  const here = await client.query<{ here: boolean }>(ctx.compiled.outputTableHere.text, ctx.compiled.outputTableHere.values);
  if (here.rows[0].here) {
    await fillFromModule(client, ctx, {}, bounds, cursor, hi);
    return ctx.compiled.compareFromOutputTable(bounds, types, whole);
  }
  return ctx.compiled.compareFromJson(bounds, JSON.stringify(await moduleOutput(client, ctx, bounds, cursor, hi)), types, whole);
}

/** Read-only, time-limited, one snapshot, always rolled back. */
export function readOnly<T>(pool: pg.Pool, timeoutMs: number, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', statementTimeoutMs: timeoutMs, end: 'rollback' }, fn);
}
