/**
 * One chunk of a partition, in one transaction: lock the partition's ledger row, read the
 * cursor from it, do the chunk's work, advance the cursor and log the chunk — then commit. A
 * retried or zombie attempt serializes on the row lock and continues from the committed
 * cursor, so a chunk is never applied or counted twice.
 *
 * The transaction is chunk-transaction.ts; the work is a forward write (forward-chunk.ts) or,
 * in a revert run, a restore of before-images (undo/revert-chunk.ts).
 */
import type pg from 'pg';
import { inChunkTransaction } from './chunk-transaction';
import { forwardChunk } from './forward-chunk';
import { revertChunk } from '../undo/revert-chunk';
import type { RunContext } from './run-context';
import type { ChunkOutcome, ChunkRequest } from './chunk-transaction';

export type { ChunkOutcome, ChunkRequest } from './chunk-transaction';

export function runChunk(pool: pg.Pool, ctx: RunContext, request: ChunkRequest): Promise<ChunkOutcome> {
  return inChunkTransaction(pool, ctx, request, ctx.revert ? revertChunk(ctx, request) : forwardChunk(ctx, request));
}
