/**
 * One chunk of a partition, in one transaction: lock the partition's ledger row, read the
 * cursor from it, do the chunk's work, advance the cursor and log the chunk — then commit. A
 * retried or zombie attempt serializes on the row lock and continues from the committed
 * cursor, so a chunk is never applied or counted twice.
 *
 * The transaction is chunk-transaction.ts; the work is a forward write (forward-chunk.ts) or,
 * in a revert run, a restore of before-images (revert-chunk.ts).
 */
import type pg from 'pg';
import type { ChunkRecordDecision } from '../governor';
import type { PartitionRow } from '../ledger/partitions';
import type { RowCounts } from '../shared/types';
import { inChunkTransaction } from './chunk-transaction';
import { forwardChunk } from './forward-chunk';
import { revertChunk } from './revert-chunk';
import type { RunContext } from './run-context';

export interface ChunkRequest {
  runId: string;
  partitionId: string;
  chunkSize: number;
  /** Take the run's writer lock first: one chunk of this run writes at a time, across workers. */
  oneWriter: boolean;
  record: ChunkRecordDecision;
  /** A statement timeout at this size fails the partition (the floor was reached); otherwise the chunk is retried smaller. */
  failOnTimeout: boolean;
  /** The worker writing it, for the chunk log. */
  worker?: string;
}

interface ChunkFacts extends RowCounts {
  /** The partition's ledger row after the chunk (as it stands after a rollback). */
  row: PartitionRow;
  /** Time spent waiting for the run's writer lock before the chunk began. */
  turnMs: number;
}

/**
 * What became of a chunk. Only `committed` wrote anything (its counts are what it did, zero
 * when the partition was already finished); every other kind rolled back, saying why in `cause`.
 */
export type ChunkOutcome =
  /** Committed: written and checkpointed, and the partition finished if `row.status` says so. */
  | ({ kind: 'committed' } & ChunkFacts)
  /** Gave up waiting for a lock after a short lock timeout: the partition holds and looks again. */
  | ({ kind: 'lock-timeout'; cause: string } & ChunkFacts)
  /**
   * Another transaction changed rows this chunk read or writes after its snapshot (SQLSTATE
   * 40001, or a deadlock 40P01): computed again, from the new state.
   */
  | ({ kind: 'concurrent-change'; cause: string } & ChunkFacts)
  /** A statement ran past limits.statementTimeoutSeconds: tried again smaller. */
  | ({ kind: 'statement-timeout'; cause: string } & ChunkFacts)
  /** The database cannot take writes (disk full): the run pauses for an operator, not a retry. */
  | ({ kind: 'pause-run'; cause: string } & ChunkFacts);

export function runChunk(pool: pg.Pool, ctx: RunContext, request: ChunkRequest): Promise<ChunkOutcome> {
  return inChunkTransaction(pool, ctx, request, ctx.revert ? revertChunk(ctx, request) : forwardChunk(ctx, request));
}
