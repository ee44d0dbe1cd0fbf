/**
 * splitTail (`limits.splitTail`): a concurrency slot has no partition left to start while others
 * run. The running partition with the most rows left is cut at its middle key, so the slot takes
 * the upper half instead of idling until the last partition ends alone. The rows left are counted
 * up to SCAN_CAP: past that, the cut is at SCAN_CAP / 2 and the upper part, larger, can be cut
 * again when the next slot frees. A partition with fewer than two chunks left is not worth a cut.
 *
 * The choice is made from counts taken outside any lock; the cut is counted again and made with
 * the partition's row locked, between two of its chunks (ledger/partition-splits.ts). A retried
 * attempt may cut once more, which only makes one more partition: every cut keeps the partition's
 * keys covered exactly once, and the run's completeness proof checks that it did.
 */
import type pg from 'pg';
import { inTransaction } from '../db/pool';
import { inReadOnlyCheck, querySingle } from '../db/session';
import { getPartition, lockPartition, type PartitionRow } from '../ledger/partitions';
import { partitionCount, splitOff, type SplitOff } from '../ledger/partition-splits';
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
  let best: { id: string; left: number } | undefined;
  for (const id of input.running) {
    const row = await getPartition(pool, input.runId, id);
    if (!row || !CUTTABLE.includes(row.status)) continue;
    const left = await inReadOnlyCheck(pool, (client) => rowsLeft(client, ctx, row), timeoutMs);
    if (!best || left > best.left) best = { id, left };
  }
  if (!best || best.left < 2 * chunkSize) return null;
  const { id } = best;
  return inTransaction(pool, { end: 'commit', statementTimeoutMs: timeoutMs }, async (client) => {
    await client.query(`SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`);
    const row = await lockPartition(client, input.runId, id);
    if (!CUTTABLE.includes(row.status)) return null;
    const left = await rowsLeft(client, ctx, row);
    if (left < 2 * chunkSize) return null;
    const half = ctx.compiled.chunkBounds(row.bounds, row.cursor, Math.floor(left / 2));
    const at = (await querySingle<{ hi: string | null }>(client, half.text, half.values)).rows[0].hi;
    return at === null ? null : splitOff(client, row, at, left);
  });
}

async function rowsLeft(client: pg.PoolClient, ctx: RunContext, row: PartitionRow): Promise<number> {
  const count = ctx.compiled.rowsLeft(row.bounds, row.cursor, SCAN_CAP);
  return (await querySingle<{ n: number }>(client, count.text, count.values)).rows[0].n;
}
