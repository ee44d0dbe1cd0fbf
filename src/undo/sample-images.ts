/**
 * `plan --measure-writes` takes a sample chunk's before-images as the run would (docs/undo.md):
 * into tables where the run's would go, so their WAL counts (temporary ones when this role may
 * not create there), all gone with the sample's rollback.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { compileBeforeImages, type CompiledImages, type ImageTables } from './image-statements';
import { quoteIdent } from '../db/sql';
import type { Recomputable } from '../gates/compare';

/**
 * What the sample's images take on disk: their values as stored (compressed, out of line) and
 * each image row's tuple. Not the sample table's size: a new table's first pages, TOAST table and
 * index would outweigh a sample's few image rows many times over.
 */
export async function storedImageBytes(client: pg.PoolClient, { tables, compiled }: { tables: ImageTables; compiled: CompiledImages }): Promise<number> {
  const values = compiled.imageColumns.map((c) => `coalesce(pg_column_size(i.${c}), 0)`).join(' + ');
  const { rows } = await client.query<{ b: string }>(`SELECT coalesce(sum(${values} + ${IMAGE_ROW_OVERHEAD}), 0) AS b FROM ${tables.table} i`);
  return Number(rows[0].b);
}

/** An image row's own bytes besides its rows: tuple header, line pointer, change, transaction id, TOAST pointer. */
const IMAGE_ROW_OVERHEAD = 64;

/** An empty image table for one sample, gone with its transaction's rollback. */
export async function sampleImageTable(client: pg.PoolClient, ctx: Recomputable): Promise<{ tables: ImageTables; compiled: CompiledImages }> {
  const compiled = compileBeforeImages(ctx.spec, ctx.run.shape);
  const { rows } = await client.query<{ ok: boolean }>(
    `SELECT to_regnamespace('backfill_undo') IS NOT NULL AND has_schema_privilege('backfill_undo', 'CREATE') AS ok`,
  );
  if (rows[0].ok) {
    const name = `plan-sample-${randomUUID()}`;
    const tables = { table: `backfill_undo.${quoteIdent(name)}`, rowType: `backfill_undo.${quoteIdent(`${name}:row`)}` };
    for (const statement of compiled.createTables(tables)) await client.query(statement);
    return { tables, compiled };
  }
  const tables = { table: 'pg_temp.backfill_plan_images', rowType: 'pg_temp.backfill_plan_images_row' };
  for (const statement of compiled.createTables(tables, { temporary: true })) await client.query(statement);
  return { tables, compiled };
}
