/**
 * The envelope every chunk runs in, forward or revert: one REPEATABLE READ transaction on one
 * pooled session, the run's writer turn when its partitions write one at a time, the chunk's
 * lock and statement timeouts, the partition's ledger row locked first — then the body, then
 * COMMIT with the durability the body's outcome calls for. What went wrong becomes a
 * ChunkOutcome the partition loop acts on, or the partition fails with its range recorded.
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { describePgError, isDataError, summarizePgError } from '../db/errors';
import { limitChunkTransaction } from '../db/session';
import { hasSqlState, SqlState } from '../db/sqlstate';
import { countConcurrentChange, finishPartition, getPartition, lockPartition, type PartitionRow } from '../ledger/partitions';
import { awaitWriterTurn } from '../ledger/writer-lock';
import { FailureType } from '../domain/failures';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS } from '../domain/limits';
import type { RowCounts } from '../domain/types';
import { TransformError } from '../transforms/transform-error';
import type { ChunkRecordDecision } from '../governor';
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
  /** Every commit waits for its WAL to reach the disk, not only the partition's last (flushesEveryChunk). */
  flushEveryChunk: boolean;
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
   * 40001, or a deadlock 40P01): computed again, from the new state. `ownRow`: the row changed
   * was the partition's own ledger row, before the chunk read anything (limits.splitTail cut
   * the partition, or another attempt of it wrote a chunk), not the application's rows.
   */
  | ({ kind: 'concurrent-change'; cause: string; ownRow?: true } & ChunkFacts)
  /** A statement ran past limits.statementTimeoutSeconds: tried again smaller. */
  | ({ kind: 'statement-timeout'; cause: string } & ChunkFacts)
  /** The database cannot take writes (disk full): the run pauses for an operator, not a retry. */
  | ({ kind: 'pause-run'; cause: string } & ChunkFacts);

/** How long a chunk waits for any lock before it rolls back and the partition holds instead. */
const LOCK_TIMEOUT_MS = 2000;
/** How long a chunk waits for its turn when the run's partitions write one at a time. */
const WRITER_WAIT_MS = 60_000;

/** Where the body has got to in its partition: error messages name the range it was writing. */
export interface ChunkPosition {
  cursor: string | null;
  hi: string | null;
  /** When the chunk's own work began (after any writer turn). */
  startedAt: number;
  /** Time spent waiting for the run's writer turn before it. */
  turnMs: number;
}

/** What a body did inside the transaction; the envelope commits it. */
export interface ChunkWork {
  row: PartitionRow;
  counts: RowCounts;
  /** The partition finished in this chunk: the commit waits for its WAL to be flushed. */
  done: boolean;
  /** Committed, and then the partition is reported failed, saying why (no row data). */
  failure?: string;
  /** Runs once the commit has succeeded (a session cache that must not outlive a rollback). */
  afterCommit?: () => void;
}

export type ChunkBody = (client: pg.PoolClient, locked: PartitionRow, at: ChunkPosition) => Promise<ChunkWork>;

const NO_ROWS: RowCounts = { rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0 };

export async function inChunkTransaction(pool: pg.Pool, ctx: RunContext, request: ChunkRequest, body: ChunkBody): Promise<ChunkOutcome> {
  const { runId, partitionId } = request;
  const statementTimeoutSeconds = ctx.spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS;
  const client = await pool.connect();
  const at: ChunkPosition = { cursor: null, hi: null, startedAt: Date.now(), turnMs: 0 };
  let bounds: PartitionRow['bounds'] | undefined;
  let broken: Error | undefined;
  try {
    // one snapshot for the whole chunk: the transform's input and the write are one state of the
    // database, and a target row another transaction changed after that snapshot makes the write
    // fail (40001) instead of overwriting the change with a value computed from older input.
    // A lock wait must end as a lock timeout (the partition holds and looks again), never as a
    // statement timeout, which would shrink the chunk and at the floor fail the partition.
    const limits = { lockTimeoutMs: Math.min(LOCK_TIMEOUT_MS, statementTimeoutSeconds * 500), statementTimeoutMs: statementTimeoutSeconds * 1000 };
    if (request.oneWriter) {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await awaitWriterTurn(client, runId, WRITER_WAIT_MS);
      // waiting for our turn is not the chunk's cost: the pace after it is measured on the work alone
      at.turnMs = Date.now() - at.startedAt;
      at.startedAt = Date.now();
      await limitChunkTransaction(client, limits);
    } else {
      await limitChunkTransaction(client, limits, { begin: true });
    }
    const locked = await lockPartition(client, runId, partitionId).catch((err: unknown) => {
      // the snapshot was taken as the lock was asked for, and the row changed while it waited
      throw hasSqlState(err, SqlState.SerializationFailure) ? new OwnRowChanged(err) : err;
    });
    if (locked.status !== 'running') {
      // another attempt finished it while we waited for the lock
      await client.query('COMMIT');
      return { kind: 'committed', row: locked, ...NO_ROWS, turnMs: at.turnMs };
    }
    at.cursor = locked.cursor;
    bounds = locked.bounds;
    const work = await body(client, locked, at);
    // RESET ALL in the same round trip: a set_config(…, false) in spec SQL must not outlive its
    // chunk on this pooled session (a rolled-back chunk undoes it by itself)
    await client.query(`${commitDurability(work.done, request.flushEveryChunk)}COMMIT; RESET ALL`);
    work.afterCommit?.();
    if (work.failure) throw ApplicationFailure.nonRetryable(work.failure, FailureType.DataError);
    return { kind: 'committed', row: work.row, ...NO_ROWS, ...work.counts, turnMs: at.turnMs };
  } catch (err) {
    // after a COMMIT (a body's failure is thrown once committed) this ROLLBACK only warns
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    if (err instanceof ApplicationFailure) throw err;
    return await afterRollback(pool, client, ctx, request, err, { ...at, bounds, statementTimeoutSeconds });
  } finally {
    client.release(broken);
  }
}

/** A rolled-back chunk: the outcome the partition loop acts on, or the partition failed and the error thrown. */
async function afterRollback(
  pool: pg.Pool,
  client: pg.PoolClient,
  ctx: RunContext,
  request: ChunkRequest,
  err: unknown,
  at: ChunkPosition & { bounds?: PartitionRow['bounds']; statementTimeoutSeconds: number },
): Promise<ChunkOutcome> {
  const { runId, partitionId } = request;
  const cause = summarizePgError(err);
  const replace = ctx.spec.target.mode === 'replace';
  const rolledBack = async (db: pg.Pool | pg.PoolClient) => ({ row: (await getPartition(db, runId, partitionId))!, ...NO_ROWS, turnMs: at.turnMs });
  if (hasSqlState(err, SqlState.LockNotAvailable)) return { kind: 'lock-timeout', ...(await rolledBack(client)), cause };
  if (hasSqlState(err, SqlState.DiskFull)) {
    // a full disk will not empty itself by retrying: hold everything for an operator
    const reason = `the database cannot write: ${cause}; free space, then: backfill resume ${runId}`;
    return { kind: 'pause-run', ...(await rolledBack(pool)), cause: reason };
  }
  if (err instanceof OwnRowChanged) {
    // nothing of the application's was met: not counted as its change, and computed again at once
    return { kind: 'concurrent-change', ...(await rolledBack(pool)), cause: summarizePgError(err.pgError), ownRow: true };
  }
  if (hasSqlState(err, SqlState.SerializationFailure, SqlState.DeadlockDetected)) {
    return { kind: 'concurrent-change', row: await countConcurrentChange(pool, runId, partitionId), ...NO_ROWS, turnMs: at.turnMs, cause };
  }
  const range = () => ctx.compiled.describeRange(at.bounds!, at.cursor, at.hi);
  if (hasSqlState(err, SqlState.QueryCanceled, SqlState.IdleInTransactionTimeout)) {
    // the same chunk would only time out again: try it smaller, until the floor
    if (!replace && !request.failOnTimeout) return { kind: 'statement-timeout', ...(await rolledBack(pool)), cause };
    const message =
      `partition ${partitionId} failed at ${range()}: a statement was cancelled after running up to limits.statementTimeoutSeconds (${at.statementTimeoutSeconds} s)` +
      `${replace ? ' (replace mode computes a whole partition in one statement)' : ` even in chunks of ${request.chunkSize} rows`}, or by an operator; ` +
      `${replace ? 'use smaller partitions' : 'lower limits.chunkSize'} or raise the timeout, then: backfill retry-failed ${runId}`;
    await finishPartition(pool, runId, partitionId, 'failed', { message, range: range(), detail: `${message} (${describePgError(err)})` });
    throw ApplicationFailure.nonRetryable(message, FailureType.DataError);
  }
  if (isDataError(err) || err instanceof TransformError) {
    // the summary travels through Temporal (results, failures, the Web UI); the full error —
    // "Failing row contains (…)", the transform's own message — stays in the ledger
    const where = `partition ${partitionId} failed at ${range()}`;
    const summary = err instanceof TransformError ? err.summary : cause;
    const message = `${where}: ${summary}; the full error is in the ledger: backfill status ${runId}`;
    const detail = `${where}: ${err instanceof TransformError ? err.message : describePgError(err)}`;
    await finishPartition(pool, runId, partitionId, 'failed', { message, range: range(), detail });
    throw ApplicationFailure.nonRetryable(message, FailureType.DataError);
  }
  throw err;
}

/** The partition's own ledger row changed after the chunk's snapshot: a split, or another attempt's chunk. */
class OwnRowChanged extends Error {
  constructor(readonly pgError: unknown) {
    super(`the partition's ledger row changed while the chunk waited for it: ${summarizePgError(pgError)}`);
  }
}

/**
 * What a chunk's COMMIT is preceded by. A chunk that does not finish its partition commits
 * without waiting for its WAL to reach the disk (synchronous_commit = off): its write and its
 * checkpoint are one transaction, so a commit lost in a server crash rewinds both, and the
 * partition resumes from the cursor that survived. The partition's last commit runs under the
 * session's own setting (synchronous replicas included) and, WAL being one sequence, flushes
 * every chunk before it; only then is the partition reported done. Nothing outside the
 * database learns of a chunk before that but progress figures, which a crash may roll back.
 */
export function commitDurability(finishesPartition: boolean, flushEveryChunk: boolean): string {
  return finishesPartition || flushEveryChunk ? '' : 'SET LOCAL synchronous_commit = off; ';
}
