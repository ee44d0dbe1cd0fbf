/**
 * backfill_undo: each run's before-images (docs/undo.md), one table per run. The statements
 * that fill it run in the chunk's transaction and are compiled with the chunk's own
 * (compiler/before-images.ts); this module names the table, creates it with the run, and
 * measures it.
 */
import type pg from 'pg';
import { quoteIdent } from '../db/sql';

type Queryable = pg.Pool | pg.PoolClient;

/** The run's image table: named by its run id, which is unique for good. */
export function imageTableOf(runId: string): string {
  return `backfill_undo.${quoteIdent(runId)}`;
}

/** Creates the run's empty image table (`ddl` from CompiledImages.createTable), in the registration's transaction. */
export async function createImageTable(client: pg.PoolClient, ddl: string): Promise<void> {
  await client.query(ddl);
}

/** What status says of a run's images: kept how long, until when (once it finished), and their size on disk (null once dropped). */
export interface UndoFacts {
  keep: string;
  until: Date | null;
  bytes: number | null;
}

/** A run's before-images as status shows them; null for a run that keeps none. */
export async function undoFacts(db: Queryable, runId: string): Promise<UndoFacts | null> {
  const { rows } = await db.query<{ keep: string | null; until: Date | null; bytes: string | null }>(
    `SELECT undo_keep AS keep, finished_at + undo_keep::interval AS until,
            CASE WHEN to_regclass(undo_table) IS NOT NULL THEN pg_total_relation_size(to_regclass(undo_table)) END AS bytes
       FROM backfill.runs WHERE run_id = $1 AND undo_table IS NOT NULL`,
    [runId],
  );
  if (rows.length === 0 || rows[0].keep === null) return null;
  return { keep: rows[0].keep, until: rows[0].until, bytes: rows[0].bytes === null ? null : Number(rows[0].bytes) };
}
