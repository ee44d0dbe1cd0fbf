/**
 * Warns before a run when its partitions are so small that orchestration, not writing, sets
 * its pace: every partition costs a child workflow, an activity and its ledger bookkeeping —
 * tens of milliseconds on a small machine (bench/RESULTS.md, "Small partitions") — whatever
 * its size. Reads the planner's row estimate of the source (pg_class.reltuples, no scan).
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import type { ResolvedSpec } from '../specs/resolve';

/** Below this many rows per partition on average, a partition's orchestration outweighs its write. */
export const SMALL_PARTITION_ROWS = 5_000;
/** What a suggested size aims for. */
const TARGET_PARTITION_ROWS = 50_000;
/** A run with fewer partitions than this finishes quickly however small they are. */
const MIN_PARTITIONS = 50;

/** The warning for `partitions` partitions over about `sourceRows` rows, or undefined. Pure, for unit tests. */
export function smallPartitionWarning(sourceRows: number, partitions: number, concurrency: number): string | undefined {
  if (partitions < MIN_PARTITIONS || sourceRows <= 0) return undefined;
  const perPartition = sourceRows / partitions;
  if (perPartition >= SMALL_PARTITION_ROWS) return undefined;
  // larger partitions, but still enough of them to keep every concurrency slot busy
  const factor = Math.min(Math.ceil(TARGET_PARTITION_ROWS / Math.max(1, perPartition)), Math.floor(partitions / (4 * concurrency)));
  if (factor < 2) return undefined;
  const rows = Math.max(1, Math.round(perPartition)).toLocaleString('en-US');
  return (
    `partition: about ${rows} source rows per partition on average (${partitions.toLocaleString('en-US')} partitions; the planner's estimate), ` +
    `so orchestration, not writing, will set the pace: each partition costs a workflow, an activity and its ledger records whatever its size ` +
    `(see "Small partitions" in bench/RESULTS.md); a partition.size about ${factor}× larger would run faster`
  );
}

export async function partitionSizeWarnings(db: pg.Pool, spec: ResolvedSpec, partitions: number): Promise<string[]> {
  const { rows } = await db.query<{ n: number }>('SELECT greatest(reltuples, 0) AS n FROM pg_class WHERE oid = $1::regclass', [quoteTable(spec.source.table)]);
  const warning = smallPartitionWarning(Number(rows[0]?.n ?? 0), partitions, spec.limits.concurrency);
  return warning ? [warning] : [];
}
