/**
 * A run's before-images as revert reads them — one SQL row per imaged target row (change, xid,
 * the row's columns) — whatever layout the run keeps them in (docs/undo.md).
 */
import type pg from 'pg';
import { getRun } from '../../src/ledger/runs';
import { imageTablesOf } from '../../src/ledger/before-images';
import { resolveSpec } from '../../src/specs/resolve';
import { compileBeforeImages } from '../../src/undo/image-statements';

/** A subquery of every image of the run, of every chunk. */
export async function runImages(db: pg.Pool, runId: string): Promise<string> {
  const run = await getRun(db, runId);
  if (!run?.undo_table) throw new Error(`run ${runId} keeps no before-images`);
  return compileBeforeImages(resolveSpec(run.spec), run.shape).unpacked(imageTablesOf(runId), { everyChunk: true });
}

/** How many target rows the run imaged. */
export async function imagedRows(db: pg.Pool, runId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${await runImages(db, runId)} i`);
  return rows[0].n;
}
