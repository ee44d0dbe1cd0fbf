/**
 * backfill_undo: each run's before-images (docs/undo.md), one table per run. The statements
 * that fill it run in the chunk's transaction and are compiled with the chunk's own
 * (undo/image-statements.ts); this module names the table, creates it with the run, and
 * measures it.
 */
import type pg from 'pg';
import { quoteIdent } from '../db/sql';
import { IMAGE_XID, type ImageTables } from '../undo/image-statements';

type Queryable = pg.Pool | pg.PoolClient;

/** The run's image table: named by its run id, which is unique for good. */
export function imageTableOf(runId: string): string {
  return `backfill_undo.${quoteIdent(runId)}`;
}

/** The run's image table and the row type its images are kept as (undo/image-statements.ts). */
export function imageTablesOf(runId: string): ImageTables {
  return { table: imageTableOf(runId), rowType: `backfill_undo.${quoteIdent(`${runId}:row`)}` };
}

/** Creates the run's empty image tables (`ddl` from CompiledImages.createTables), in the registration's transaction. */
export async function createImageTables(client: pg.PoolClient, ddl: string[]): Promise<void> {
  for (const statement of ddl) await client.query(statement);
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

/**
 * Readies a run's images for a revert, which restores them one original chunk at a time: an
 * index on the chunk's transaction (built once; the run's chunks never paid for it), fresh
 * statistics (autovacuum is off on image tables), and the columns a deleted row goes back into
 * (every target column but generated ones, which PostgreSQL computes).
 */
export async function prepareImagesForRevert(db: Queryable, runId: string, targetTable: string): Promise<{ insertColumns: string[] }> {
  const { table, rowType } = imageTablesOf(runId);
  await db.query(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`${runId}:by-chunk`)} ON ${table} (${quoteIdent(IMAGE_XID)})`);
  await db.query(`ANALYZE ${table}`);
  const { rows: columns } = await db.query<{ name: string }>(
    `SELECT t.attname::text AS name FROM pg_attribute t
      WHERE t.attrelid = $1::regclass AND t.attnum > 0 AND NOT t.attisdropped AND t.attgenerated = ''
        AND EXISTS (SELECT 1 FROM pg_attribute i WHERE i.attrelid = $2::regclass AND i.attname = t.attname AND NOT i.attisdropped)
      ORDER BY t.attnum`,
    [targetTable, rowType],
  );
  return { insertColumns: columns.map((c) => c.name) };
}

/**
 * Drops a run's before-images once its revert window has passed and no revert of it is active:
 * true when they were dropped now, else why they stay (`until` the window closes, or a revert
 * is reading them), or null when the run keeps none.
 */
export async function dropExpiredImages(
  db: Queryable,
  runId: string,
): Promise<{ dropped: true } | { dropped: false; until?: Date; reverting?: string } | null> {
  const { rows } = await db.query<{ undo_table: string | null; until: Date | null; expired: boolean | null; reverting: string | null }>(
    `SELECT undo_table, finished_at + undo_keep::interval AS until, finished_at + undo_keep::interval <= now() AS expired,
            (SELECT run_id FROM backfill.runs v WHERE v.reverts = r.run_id AND v.status IN ('pending', 'running', 'paused', 'cancelling') LIMIT 1) AS reverting
       FROM backfill.runs r WHERE run_id = $1`,
    [runId],
  );
  const run = rows[0];
  if (!run?.undo_table) return null;
  if (!run.expired) return { dropped: false, until: run.until ?? undefined };
  if (run.reverting) return { dropped: false, reverting: run.reverting };
  const { table, rowType } = imageTablesOf(runId);
  await db.query(`DROP TABLE IF EXISTS ${table}, ${rowType}`);
  return { dropped: true };
}

/** Runs whose before-images are still there though their revert window has passed (none when the ledger does not exist). */
export async function runsWithExpiredImages(db: Queryable): Promise<string[]> {
  const { rows: ledger } = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.runs')::text AS t");
  if (!ledger[0].t) return [];
  const { rows } = await db.query<{ run_id: string }>(
    `SELECT run_id FROM backfill.runs
      WHERE undo_table IS NOT NULL AND finished_at + undo_keep::interval <= now() AND to_regclass(undo_table) IS NOT NULL
      ORDER BY finished_at`,
  );
  return rows.map((r) => r.run_id);
}
