/**
 * splitTail (`limits.splitTail`): a concurrency slot has no partition left to start while others
 * run. The running partition with the most rows left is cut at its middle key, so the slot takes
 * the upper half instead of idling until the last partition ends alone. The rows left are counted
 * up to SCAN_CAP: past that, the cut is at SCAN_CAP / 2 and the upper part, larger, can be cut
 * again when the next slot frees. A partition with fewer than two chunks left is not worth a cut.
 *
 * The choice and the cut's key are made from counts and a scan taken outside any lock. With the
 * partition's row locked, between two of its chunks, the cut is made there if the partition's
 * bounds are still those it was chosen by and a chunk's worth of rows still lies before the key;
 * otherwise it is counted and found again under the lock (ledger/partition-splits.ts). A retried
 * attempt may cut once more, which only makes one more partition: every cut keeps the partition's
 * keys covered exactly once, and the run's completeness proof checks that it did.
 */
import type pg from 'pg';
import { inTransaction } from '../db/pool';
import { inReadOnlyCheck, querySingle } from '../db/session';
import { getPartition, lockPartition, type PartitionRow } from '../ledger/partitions';
import { cutAt, partitionCount, splitOff, type SplitOff } from '../ledger/partition-splits';
import { readRunControl } from '../ledger/run-control';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS } from '../domain/limits';
import type { PartitionStatus } from '../domain/statuses';
import type { ActivityDeps } from '../activities/deps';
import type { RunContext, RunContextCache } from '../activities/run-context';

export interface SplitTailInput {
  database: string;
  runId: string;
  /** The partitions the run has in flight. */
  running: string[];
}

export interface SplitTailResult {
  /** The partition cut off, to start in the free slot; null when none was worth a cut. */
  piece: SplitOff | null;
  /** The partitions the ledger holds now, the plan's and the cut ones. */
  partitions: number;
}

/** Rows counted at most per running partition: an index scan of this many keys costs about a second. */
export const SCAN_CAP = 2_000_000;
/** A partition still to start can be cut too: the run may have more slots than partitions left. */
const CUTTABLE: PartitionStatus[] = ['pending', 'running'];
/** How long the cut waits for the partition's chunk in flight to commit. */
const LOCK_WAIT_MS = 30_000;

export function splitTailActivity(deps: ActivityDeps, contexts: RunContextCache) {
  return async function splitTail(input: SplitTailInput): Promise<SplitTailResult> {
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, input.runId);
    const { chunkSize } = (await readRunControl(pool, input.runId)).limits;
    const timeoutMs = (ctx.spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS) * 1000;
    // a revert's partition is a list of the original's chunks, not a key range to cut
    if (ctx.revert) return { piece: null, partitions: await partitionCount(pool, input.runId) };

    try {
      const piece = await cutTheLargest(pool, ctx, input, chunkSize, timeoutMs);
      if (piece) deps.logger.info({ runId: input.runId, piece: piece.id }, 'split a running partition for an idle slot');
      return { piece, partitions: await partitionCount(pool, input.runId) };
    } catch (err) {
      // a cut is an optimisation: one that cannot be made (a count past the statement timeout, a
      // lock held too long) leaves the run as it was, where a retried activity would hold its loop
      deps.logger.warn({ runId: input.runId, error: (err as Error).message }, 'could not split a running partition; going on without');
      return { piece: null, partitions: 0 };
    }
  };
}

async function cutTheLargest(pool: pg.Pool, ctx: RunContext, input: SplitTailInput, chunkSize: number, timeoutMs: number): Promise<SplitOff | null> {
  let best: { row: PartitionRow; left: number } | undefined;
  for (const id of input.running) {
    const row = await getPartition(pool, input.runId, id);
    if (!row || !CUTTABLE.includes(row.status)) continue;
    const left = await inReadOnlyCheck(pool, (client) => rowsLeft(client, ctx, row), timeoutMs);
    if (!best || left > best.left) best = { row, left };
  }
  if (!best || best.left < 2 * chunkSize) return null;
  const seen = best;
  // the key is found before the partition is locked: its next chunk waits for the lock, and a
  // scan of half its rows under it held the partition the run's tail waits for (bench/RESULTS.md).
  // A running partition's chunk in flight commits before the lock is ours: the key halves what is left after it
  const inFlight = seen.row.status === 'running' ? chunkSize : 0;
  const at = await inReadOnlyCheck(pool, (client) => keyAfter(client, ctx, seen.row, Math.floor((seen.left + inFlight) / 2)), timeoutMs);
  if (at === null) return null;
  return inTransaction(pool, { end: 'commit', statementTimeoutMs: timeoutMs }, async (client) => {
    await client.query(`SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`);
    const row = await lockPartition(client, input.runId, seen.row.partition_id);
    if (!CUTTABLE.includes(row.status)) return null;
    if (JSON.stringify(row.bounds) === JSON.stringify(seen.row.bounds) && (await rowsBefore(client, ctx, row, at, chunkSize)) >= chunkSize) {
      // its chunks since then (the one in flight commits before the lock is ours) read from below the key
      const left = Math.max(0, seen.left - (Number(row.rows_read) - Number(seen.row.rows_read)));
      return splitOff(client, row, at, left);
    }
    // cut meanwhile (a retried attempt of this activity), or its cursor near the key: counted again, under the lock
    const left = await rowsLeft(client, ctx, row);
    if (left < 2 * chunkSize) return null;
    const again = await keyAfter(client, ctx, row, Math.floor(left / 2));
    return again === null ? null : splitOff(client, row, again, left);
  });
}

/** The key `rows` rows after the partition's cursor: the last one its cut keeps. */
async function keyAfter(client: pg.PoolClient, ctx: RunContext, row: PartitionRow, rows: number): Promise<string | null> {
  const kept = ctx.compiled.chunkBounds(row.bounds, row.cursor, rows);
  return (await querySingle<{ hi: string | null }>(client, kept.text, kept.values)).rows[0].hi;
}

/** Rows after the cursor through `at`, counted up to a chunk's worth: what the partition keeps once cut there. */
async function rowsBefore(client: pg.PoolClient, ctx: RunContext, row: PartitionRow, at: string, cap: number): Promise<number> {
  return rowsLeft(client, ctx, { ...row, bounds: cutAt(row.bounds, at).kept }, cap);
}

async function rowsLeft(client: pg.PoolClient, ctx: RunContext, row: PartitionRow, cap = SCAN_CAP): Promise<number> {
  const count = ctx.compiled.rowsLeft(row.bounds, row.cursor, cap);
  return (await querySingle<{ n: number }>(client, count.text, count.values)).rows[0].n;
}
