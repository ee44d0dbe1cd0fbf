/**
 * A run's before-images read back as rows, of every chunk — whatever layout the run keeps them
 * in (image-statements.ts): for `status`-like reads, benchmarks and tests, never the hot path.
 */
import type pg from 'pg';
import { getRun } from '../ledger/runs';
import { imageTablesOf } from '../ledger/before-images';
import { resolveSpec } from '../specs/resolve';
import { compileBeforeImages } from './image-statements';

/** A subquery of every image of the run: change, xid, the row's columns; one SQL row per imaged target row. */
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
