/**
 * A table unlike the demo's, for before-images and reverts: a quoted mixed-case schema and table
 * (`"Shop"."Order Lines"` → `"Shop"."LineTotals"`), a composite key, numeric(12,2), timestamp(3),
 * and a target column no run writes. The target is seeded so a run finds a third of the lines as
 * it computes them (unchanged), a third with other values (updated) and a third absent (inserted),
 * plus stray rows replace mode deletes.
 */
import type pg from 'pg';
import { quoteIdent } from '../../src/db/sql';
import type { SpecInput } from '../../src/specs/schema';

export const ORDERS = 3_000;
export const LINES = 3;
export const TARGET = '"Shop"."LineTotals"';
export const TRANSFORM = `SELECT order_id, line_no, (qty * price)::numeric(12,2) AS total, upper(sku) AS note, placed_at AS "updatedAt" FROM chunk`;
/** What each mode changes in the seeded target, by image kind (u updated, i inserted, d deleted). */
export const CHANGES: Record<'upsert' | 'update' | 'replace', Record<string, number>> = {
  // (order_id + line_no) % 3: 0 unchanged, 1 updated, 2 absent
  upsert: { i: (ORDERS * LINES) / 3, u: (ORDERS * LINES) / 3 },
  update: { u: (ORDERS * LINES) / 3 },
  replace: { d: Math.ceil(ORDERS / 7), i: (ORDERS * LINES) / 3, u: (ORDERS * LINES) / 3 },
};

export async function createLineTotals(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE SCHEMA "Shop";
    CREATE TABLE "Shop"."Order Lines" (order_id bigint, line_no smallint, sku text NOT NULL, qty integer NOT NULL, price numeric(10,2) NOT NULL,
                                       placed_at timestamp(3) NOT NULL, PRIMARY KEY (order_id, line_no));
    INSERT INTO "Shop"."Order Lines"
      SELECT o, l, 'sku-' || (o * 7 + l) % 97, 1 + (o + l) % 5, ((o * 13 + l) % 5000) / 100.0 + 1, timestamp '2026-01-01 00:00:00.123' + o * interval '1 minute'
        FROM generate_series(1, ${ORDERS}) o, generate_series(1, ${LINES}) l;
    CREATE TABLE ${TARGET} (order_id bigint, line_no smallint, total numeric(12,2), note text, "updatedAt" timestamp(3), kept text DEFAULT 'untouched',
                            PRIMARY KEY (order_id, line_no));
  `);
}

export function lineTotalsSpec(envVar: string, mode: 'upsert' | 'update' | 'replace', extra: Partial<SpecInput> = {}): SpecInput {
  return {
    name: `lines-${mode}`,
    reason: 'line totals',
    database: envVar,
    source: { table: 'Shop.Order Lines', key: ['order_id', 'line_no'] },
    partition: { by: 'range', column: 'order_id', size: 1_000 },
    transform: { name: 'line-totals', version: 1, sql: TRANSFORM },
    target: { table: 'Shop.LineTotals', key: ['order_id', 'line_no'], mode, ...(mode === 'replace' ? { partitionColumn: 'order_id' } : {}) },
    limits: { chunkSize: 500, concurrency: 2 },
    ...extra,
  } as SpecInput;
}

export async function seedLineTotals(pool: pg.Pool): Promise<void> {
  await pool.query(`TRUNCATE ${TARGET}`);
  await pool.query(`
    INSERT INTO ${TARGET} (order_id, line_no, total, note, "updatedAt", kept)
      SELECT order_id, line_no,
             CASE WHEN (order_id + line_no) % 3 = 0 THEN (qty * price)::numeric(12,2) ELSE 0.01 END,
             CASE WHEN (order_id + line_no) % 3 = 0 THEN upper(sku) ELSE NULL END,
             placed_at, 'kept ' || order_id
        FROM "Shop"."Order Lines" WHERE (order_id + line_no) % 3 <> 2;
    INSERT INTO ${TARGET} (order_id, line_no, total, note, kept) SELECT o, 9, 9.99, 'stray', 'stray' FROM generate_series(1, ${ORDERS}, 7) o;
  `);
}

/** A copy of the target as it is now, as `"Shop".<name>`. */
export async function snapshotLineTotals(pool: pg.Pool, name: string): Promise<string> {
  await pool.query(`DROP TABLE IF EXISTS "Shop".${quoteIdent(name)}; CREATE TABLE "Shop".${quoteIdent(name)} AS SELECT * FROM ${TARGET}`);
  return `"Shop".${quoteIdent(name)}`;
}

/** Rows of `a` not in `b`, and of `b` not in `a` (duplicates counted). */
export async function differences(pool: pg.Pool, a: string, b: string): Promise<{ onlyA: number; onlyB: number }> {
  const { rows } = await pool.query<{ a: string; b: string }>(
    `SELECT (SELECT count(*) FROM (TABLE ${a} EXCEPT ALL TABLE ${b}) x) AS a, (SELECT count(*) FROM (TABLE ${b} EXCEPT ALL TABLE ${a}) x) AS b`,
  );
  return { onlyA: Number(rows[0].a), onlyB: Number(rows[0].b) };
}
