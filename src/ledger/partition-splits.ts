/**
 * Splitting a running partition (`limits.splitTail`): in the caller's transaction, with the
 * partition's row locked, the partition keeps its keys through `at` and a new partition takes
 * the ones after it. Each chunk reads its partition's bounds from the locked row, so the next
 * chunk stops at `at`; a chunk whose snapshot predates the split fails to lock the changed row
 * (40001) and is computed again from it. The new partition is named after the one it was cut
 * from (`leaf:orders_2024_03+1`, `+2` for the next cut of the same one) and comes last in the
 * plan's order, where the run's next page finds it.
 */
import type pg from 'pg';
import type { PartitionBounds } from '../domain/types';
import type { PartitionRow } from './partitions';
import { recordEvent } from './events';

export interface SplitOff {
  id: string;
  ordinal: number;
}

/** A partition's bounds cut at `at`: the keys it keeps (through `at`) and those its new piece takes (after it). */
export function cutAt(bounds: PartitionBounds, at: string): { kept: PartitionBounds; piece: PartitionBounds } {
  return {
    kept: { ...bounds, stretch: { after: bounds.stretch?.after ?? null, through: at } },
    piece: { ...bounds, stretch: { after: at, through: bounds.stretch?.through ?? null } },
  };
}

export async function splitOff(client: pg.PoolClient, row: PartitionRow, at: string, rowsLeft: number): Promise<SplitOff> {
  const { run_id: runId, partition_id: from } = row;
  const { kept, piece: pieceBounds } = cutAt(row.bounds, at);
  const { rows } = await client.query<{ cuts: number; ordinal: number }>(
    `SELECT (SELECT count(*) FROM backfill.partitions WHERE run_id = $1 AND split_from = $2)::integer AS cuts,
            (SELECT max(ordinal) + 1 FROM backfill.partitions WHERE run_id = $1) AS ordinal`,
    [runId, from],
  );
  const piece = { id: `${from}+${rows[0].cuts + 1}`, ordinal: rows[0].ordinal };
  await client.query('UPDATE backfill.partitions SET bounds = $3, updated_at = now() WHERE run_id = $1 AND partition_id = $2', [
    runId,
    from,
    JSON.stringify(kept),
  ]);
  await client.query(
    `INSERT INTO backfill.partitions (run_id, partition_id, ordinal, bounds, status, split_from, run_attempt)
     VALUES ($1, $2, $3, $4, 'pending', $5, $6)`,
    [runId, piece.id, piece.ordinal, JSON.stringify(pieceBounds), from, row.run_attempt],
  );
  await recordEvent(client, {
    runId,
    kind: 'partition-split',
    actor: 'backfill',
    reason: `a concurrency slot had no partition left to start: ${piece.id} takes the upper half of the rows ${from} had left`,
    // the key it was cut at is row data: the partitions' bounds hold it
    detail: { partition: from, piece: piece.id, rowsLeft },
  });
  return piece;
}

/** How many partitions the run's ledger holds now: the plan's and the ones split from them. */
export async function partitionCount(db: pg.Pool | pg.PoolClient, runId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::integer AS n FROM backfill.partitions WHERE run_id = $1', [runId]);
  return rows[0].n;
}
