/**
 * The ledger's side of reverts (docs/undo.md): the partitions a revert run restored are marked
 * `reverted` in the run it undid, each naming the revert run; the rows it left alone because
 * someone changed them after the run are its conflicts, their keys kept here only.
 */
import type pg from 'pg';
import { allowedFrom, PARTITION_TRANSITIONS } from '../domain/statuses';

type Queryable = pg.Pool | pg.PoolClient;

/** Records a chunk's conflicts (`select`: key and change of each, from CompiledRevert.conflicts); returns how many were new. */
export async function recordConflicts(client: pg.PoolClient, runId: string, partitionId: string, select: { text: string; values: unknown[] }): Promise<number> {
  const n = select.values.length;
  const res = await client.query(
    `INSERT INTO backfill.revert_conflicts (run_id, partition_id, key, change)
     SELECT $${n + 1}, $${n + 2}, c.key, c.change FROM (${select.text}) c ON CONFLICT DO NOTHING`,
    [...select.values, runId, partitionId],
  );
  return res.rowCount ?? 0;
}

/** In the revert's last chunk of the partition: the original run's partition is now reverted, by `revertRunId`. */
export async function markReverted(client: pg.PoolClient, originalRunId: string, partitionId: string, revertRunId: string): Promise<void> {
  await client.query(
    `UPDATE backfill.partitions SET status = 'reverted', reverted_by = $3, updated_at = now()
      WHERE run_id = $1 AND partition_id = $2 AND status = ANY($4)`,
    [originalRunId, partitionId, revertRunId, allowedFrom(PARTITION_TRANSITIONS, 'reverted')],
  );
}

export interface ConflictSummary {
  total: number;
  /** A few, by partition: keys are row data (ledger access only). */
  examples: { partitionId: string; key: string; change: string }[];
}

export async function conflictSummary(db: Queryable, runId: string, limit = 10): Promise<ConflictSummary> {
  const { rows: n } = await db.query<{ n: string }>('SELECT count(*) AS n FROM backfill.revert_conflicts WHERE run_id = $1', [runId]);
  const { rows } = await db.query<{ partition_id: string; key: string; change: string }>(
    'SELECT partition_id, key, change FROM backfill.revert_conflicts WHERE run_id = $1 ORDER BY partition_id, key LIMIT $2',
    [runId, limit],
  );
  return { total: Number(n[0].n), examples: rows.map((r) => ({ partitionId: r.partition_id, key: r.key, change: r.change })) };
}

/** The revert runs of a run, oldest first. */
export async function revertRunsOf(db: Queryable, runId: string): Promise<{ runId: string; status: string; createdAt: Date }[]> {
  const { rows } = await db.query<{ run_id: string; status: string; created_at: Date }>(
    'SELECT run_id, status, created_at FROM backfill.runs WHERE reverts = $1 ORDER BY created_at',
    [runId],
  );
  return rows.map((r) => ({ runId: r.run_id, status: r.status, createdAt: r.created_at }));
}

/** Partitions of a run a revert has restored. */
export async function revertedPartitions(db: Queryable, runId: string): Promise<string[]> {
  const { rows } = await db.query<{ partition_id: string }>(
    "SELECT partition_id FROM backfill.partitions WHERE run_id = $1 AND status = 'reverted' ORDER BY ordinal",
    [runId],
  );
  return rows.map((r) => r.partition_id);
}

/** What a revert of `runId` would restore, or why it cannot start. */
export type Revertable = { ok: true; imageTable: string; until: Date; partitions: { id: string; status: string }[] } | { ok: false; refusal: string };

/**
 * Whether run `runId` can be reverted now, and which of its partitions (all it wrote that no
 * revert restored yet, or the `only` ones): it must have finished, kept before-images whose
 * table is still there, and be inside its revert window (finished_at + undo keep).
 */
export async function revertable(db: Queryable, runId: string, only?: string[]): Promise<Revertable> {
  const { rows } = await db.query<{
    status: string;
    reverts: string | null;
    undo_table: string | null;
    undo_keep: string | null;
    until: Date | null;
    expired: boolean | null;
    present: boolean;
  }>(
    `SELECT status, reverts, undo_table, undo_keep, finished_at + undo_keep::interval AS until, finished_at + undo_keep::interval <= now() AS expired,
            undo_table IS NOT NULL AND to_regclass(undo_table) IS NOT NULL AS present
       FROM backfill.runs WHERE run_id = $1`,
    [runId],
  );
  const run = rows[0];
  if (!run) return { ok: false, refusal: `run ${runId} is not in the ledger (backfill list shows the runs)` };
  if (run.reverts) return { ok: false, refusal: `run ${runId} is itself a revert (of ${run.reverts}); to redo what it undid, start the original spec again` };
  if (!['succeeded', 'failed', 'cancelled'].includes(run.status)) {
    return {
      ok: false,
      refusal: `run ${runId} is ${run.status}; a run can be reverted once it has finished (cancel it first: backfill cancel ${runId} --reason "…")`,
    };
  }
  if (!run.undo_table)
    return { ok: false, refusal: `run ${runId} kept no before-images (undo: off, or it ran before backfill kept them): it cannot be reverted` };
  if (run.expired) {
    return {
      ok: false,
      refusal: `run ${runId} could be reverted until ${run.until!.toISOString()} (undo keep: ${run.undo_keep} after it finished); that window has passed`,
    };
  }
  if (!run.present)
    return { ok: false, refusal: `run ${runId}'s before-images (${run.undo_table}) are gone (dropped by cleanup or by hand): it cannot be reverted` };
  const { rows: partitions } = await db.query<{ partition_id: string; status: string; reverted_by: string | null }>(
    'SELECT partition_id, status, reverted_by FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal, partition_id',
    [runId],
  );
  if (only && only.length > 0) {
    const known = new Map(partitions.map((p) => [p.partition_id, p]));
    const unknown = only.filter((id) => !known.has(id));
    if (unknown.length > 0)
      return { ok: false, refusal: `run ${runId} has no partition ${unknown.join(', ')} (backfill status ${runId} --partitions lists them)` };
    const done = only.filter((id) => known.get(id)!.status === 'reverted');
    if (done.length > 0)
      return { ok: false, refusal: `partition ${done.join(', ')} of run ${runId} was reverted already (by ${known.get(done[0])!.reverted_by})` };
  }
  // a partition that never started wrote nothing; one reverted already has nothing left to restore
  const chosen = partitions.filter((p) => (!only || only.length === 0 || only.includes(p.partition_id)) && p.status !== 'pending' && p.status !== 'reverted');
  if (chosen.length === 0) return { ok: false, refusal: `run ${runId} has no partition left to revert: every partition it wrote was reverted already` };
  return { ok: true, imageTable: run.undo_table, until: run.until!, partitions: chosen.map((p) => ({ id: p.partition_id, status: p.status })) };
}

/** The original run's next chunk of a partition after chunk `afterSeq` (null: its first): what one revert chunk restores. */
export async function nextOriginalChunk(
  db: Queryable,
  originalRunId: string,
  partitionId: string,
  afterSeq: number | null,
): Promise<{ seq: number; xid: string | null; written: number } | null> {
  const { rows } = await db.query<{ seq: number; xid: string | null; rows_written: string }>(
    `SELECT seq, xid::text AS xid, rows_written FROM backfill.chunks
      WHERE run_id = $1 AND partition_id = $2 AND seq > $3 ORDER BY seq LIMIT 1`,
    [originalRunId, partitionId, afterSeq ?? 0],
  );
  return rows[0] ? { seq: rows[0].seq, xid: rows[0].xid, written: Number(rows[0].rows_written) } : null;
}

/** The transaction ids of a run's chunks of one partition, in order: a revert restores, and verify checks, one at a time. */
export async function chunkTransactions(db: Queryable, runId: string, partitionId: string): Promise<string[]> {
  const { rows } = await db.query<{ xid: string }>(
    'SELECT xid::text AS xid FROM backfill.chunks WHERE run_id = $1 AND partition_id = $2 AND xid IS NOT NULL ORDER BY seq',
    [runId, partitionId],
  );
  return rows.map((r) => r.xid);
}

/** Conflicts a revert recorded, by partition. */
export async function conflictsByPartition(db: Queryable, runId: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ partition_id: string; n: string }>(
    'SELECT partition_id, count(*) AS n FROM backfill.revert_conflicts WHERE run_id = $1 GROUP BY 1',
    [runId],
  );
  return new Map(rows.map((r) => [r.partition_id, Number(r.n)]));
}
