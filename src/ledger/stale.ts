/**
 * Which partitions of a spec hold rows computed by something other than what the spec says
 * now, from the ledger: for each partition id, its latest successful write across the spec's
 * runs is stale when that run's transform version is older than the current one, or when an
 * operator accepted a change of the transform's inputs (a reference table, a function) after
 * the partition's first chunk was committed (its rows may come from the earlier input).
 * Partitions are matched by id, so a spec whose partitioning changed is stale as a whole only
 * through its version; a partition cut while it ran (limits.splitTail) counts as its planned
 * partition, written once all of its parts were. A partition a revert restored (docs/undo.md) is
 * stale until a run writes it again: its rows are back as they were before the run it undid.
 */
import type pg from 'pg';

export interface StalePartition {
  partitionId: string;
  runId: string;
  /** The version of the transform that wrote it. */
  version: number;
  finishedAt: Date;
  /** Why it is stale, in words. */
  reason: string;
}

type Queryable = pg.Pool | pg.PoolClient;

export async function stalePartitions(db: Queryable, name: string, currentVersion: number): Promise<StalePartition[]> {
  const { rows: ledger } = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.runs')::text AS t");
  if (ledger[0].t === null) return [];
  const { rows } = await db.query<{
    partition_id: string;
    run_id: string;
    version: number;
    finished_at: Date;
    accepted_at: Date | null;
    first_chunk: Date | null;
    status: string;
    reverted_by: string | null;
  }>(
    `WITH latest AS (
       SELECT DISTINCT ON (p.partition_id) p.partition_id, p.run_id, r.transform_version AS version, p.finished_at, p.ordinal, p.status, p.reverted_by
         FROM backfill.partitions p JOIN backfill.runs r USING (run_id)
        WHERE r.name = $1 AND p.status IN ('succeeded', 'reverted') AND p.split_from IS NULL
          -- a partition cut while running was written by that run only if every part cut from it was
          AND NOT EXISTS (SELECT 1 FROM backfill.partitions q WHERE ${partsOf('p', 'q')} AND q.status NOT IN ('succeeded', 'reverted'))
        -- a revert is the partition's latest event from the moment it marked it
        ORDER BY p.partition_id, CASE WHEN p.status = 'reverted' THEN p.updated_at ELSE p.finished_at END DESC
     )
     SELECT l.partition_id, l.run_id, l.version, l.finished_at, l.status, l.reverted_by,
            ${lastAcceptedInputChange('l.run_id')} AS accepted_at,
            (SELECT min(c.committed_at) FROM backfill.chunks c JOIN backfill.partitions q ON q.run_id = c.run_id AND q.partition_id = c.partition_id
              WHERE c.run_id = l.run_id AND (c.partition_id = l.partition_id OR ${partsOf('l', 'q')})) AS first_chunk
       FROM latest l
      ORDER BY l.run_id, l.ordinal`,
    [name],
  );
  const stale: StalePartition[] = [];
  for (const r of rows) {
    let reason: string | undefined;
    // reverted: its rows are back as they were before that run, which counts as never written by it
    if (r.status === 'reverted') reason = `reverted by ${r.reverted_by}; no run has written it since`;
    else if (r.version !== currentVersion) reason = `written by transform version ${r.version}, the spec is at ${currentVersion}`;
    else if (r.accepted_at && r.first_chunk && r.first_chunk < r.accepted_at) {
      reason = `computed before the input change accepted at ${r.accepted_at.toISOString()}`;
    }
    if (reason) stale.push({ partitionId: r.partition_id, runId: r.run_id, version: r.version, finishedAt: r.finished_at, reason });
  }
  return stale;
}

/**
 * SQL: `part` is a partition cut, while `planned` ran, from it or from a part of it
 * (limits.splitTail names each cut after the partition it was cut from: `P+1`, `P+1+1`).
 */
function partsOf(planned: string, part: string): string {
  return `${part}.run_id = ${planned}.run_id AND ${part}.split_from IS NOT NULL AND left(${part}.partition_id, length(${planned}.partition_id) + 1) = ${planned}.partition_id || '+'`;
}

/** When the run's operator last accepted a change of its inputs (NULL: never), as SQL over `runId`. */
function lastAcceptedInputChange(runId: string): string {
  return `(SELECT max(e.at) FROM backfill.run_events e WHERE e.run_id = ${runId} AND e.kind = 'input-change-accepted')`;
}

/** How many of a run's partitions committed a chunk before its last accepted input change: they are stale. */
export async function partitionsComputedBeforeInputChange(db: Queryable, runId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(DISTINCT c.partition_id) AS n FROM backfill.chunks c WHERE c.run_id = $1 AND c.committed_at < ${lastAcceptedInputChange('$1')}`,
    [runId],
  );
  return Number(rows[0].n);
}
