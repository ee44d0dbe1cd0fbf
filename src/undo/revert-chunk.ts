/**
 * One chunk of a revert run (docs/undo.md), inside the transaction chunk-transaction.ts opened
 * and will commit: the before-images of the original run's next chunk of this partition (by its chunk log).
 * Every row still the version that chunk wrote is put back (compare-and-set, one statement); then
 * every image of the chunk is checked against the target — each row must now be as it was before
 * the run, or be a conflict (changed by someone since: left alone, its key in the ledger). The
 * cursor (the original chunk's number), counts and the chunk log advance in the same transaction,
 * so an original chunk is restored and counted exactly once. Replace mode restores a partition
 * whole or not at all: one conflict holds the partition.
 */
import type pg from 'pg';
import { checkpointChunk, finishPartition, type PartitionRow } from '../ledger/partitions';
import { markReverted, nextOriginalChunk, recordConflicts } from '../ledger/reverts';
import type { ChunkRecordDecision } from '../governor';
import type { RowCounts } from '../domain/types';
import type { RunContext } from '../activities/run-context';
import type { ChunkBody, ChunkPosition, ChunkWork } from '../activities/chunk-transaction';

/** The part of chunk.ts's request a revert chunk reads. */
interface RevertChunkRequest {
  runId: string;
  partitionId: string;
  record: ChunkRecordDecision;
  worker?: string;
}

interface Tally {
  images: number;
  before: number;
  after: number;
  conflicts: number;
}

/** The body of a revert run's chunk; `at.hi` becomes the original chunk it restores (its number), for errors. */
export function revertChunk(ctx: RunContext, request: RevertChunkRequest): ChunkBody {
  return (client, locked, at) => restoreNextChunk(client, ctx, request, locked, at);
}

async function restoreNextChunk(
  client: pg.PoolClient,
  ctx: RunContext,
  request: RevertChunkRequest,
  locked: PartitionRow,
  at: ChunkPosition,
): Promise<ChunkWork> {
  const { compiled, of } = ctx.revert!;
  const { runId, partitionId } = request;
  const startedAt = at.startedAt;
  const none = { rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0, rowsSkipped: 0 };
  const cursor = locked.cursor === null ? null : Number(locked.cursor);
  const chunk = await nextOriginalChunk(client, of, partitionId, cursor);
  if (!chunk) return { row: await finish(), counts: none, done: true };
  // a chunk logged before images carried their transaction has none to restore by
  if (chunk.xid === null) throw new Error(`run ${of} logged chunk ${chunk.seq} of partition ${partitionId} without its transaction id: it cannot be reverted`);
  const hi = String(chunk.seq);
  at.hi = hi;
  const tally = async () => {
    const t = compiled.tally(chunk.xid!);
    return (await client.query<Tally>(t.text, t.values)).rows[0];
  };
  const log = async (counts: Required<RowCounts>) => {
    return checkpointChunk(client, runId, partitionId, hi, {
      seq: locked.chunks + 1,
      keyFrom: locked.cursor,
      keyTo: hi,
      counts,
      chunkSize: chunk.written,
      durationMs: Date.now() - startedAt,
      waitMs: request.record.waitMs,
      governedBy: request.record.governedBy,
      guardValue: request.record.guardValue,
      worker: request.worker,
    });
  };

  if (ctx.spec.target.mode === 'replace') {
    const seen = await tally();
    if (seen.conflicts > 0) {
      // the cursor stays: once the conflicts are settled, retry-failed restores this partition
      await recordConflicts(client, runId, partitionId, compiled.conflicts(chunk.xid));
      const failure =
        `partition ${partitionId}: ${seen.conflicts} of its ${seen.images} row(s) were changed after run ${of} wrote them; replace mode restores a partition ` +
        `whole or not at all, so nothing of it was restored. The keys are in the ledger (backfill status ${runId}); settle them, then: backfill retry-failed ${runId}`;
      const row = await finishPartition(client, runId, partitionId, 'failed', { message: failure });
      return { row, counts: none, done: true, failure };
    }
  }
  const restore = compiled.restore(chunk.xid);
  const restored = (await client.query<{ restored: number }>(restore.text, restore.values)).rows[0].restored;
  const now = await tally();
  if (now.after > 0 || now.before + now.conflicts !== now.images) {
    // compare-and-set restores exactly the rows still as the run left them: any left is a bug
    throw new Error(
      `revert of partition ${partitionId}: after restoring ${restored} row(s), ${now.after} of the ${now.images} imaged by chunk ${chunk.seq} of run ${of} still hold what it wrote; ` +
        'nothing of this chunk was committed. This is a bug in backfill: report it with backfill status output',
    );
  }
  if (now.conflicts > 0) await recordConflicts(client, runId, partitionId, compiled.conflicts(chunk.xid));
  const counts = { rowsRead: now.images, rowsWritten: restored, rowsUnchanged: now.before - restored, rowsSkipped: now.conflicts };
  return { row: await log(counts), counts, done: false };

  /** The partition is restored: in this run, and in the run it undid (its partition now `reverted`). */
  async function finish(): Promise<PartitionRow> {
    const row = await finishPartition(client, runId, partitionId, 'succeeded');
    await markReverted(client, of, partitionId, runId);
    return row;
  }
}
