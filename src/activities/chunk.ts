/**
 * One chunk of a partition, in one transaction: lock the partition's ledger row, read the
 * cursor from it, find the chunk's key range, compute the transform's output, write only
 * rows whose values differ, advance the cursor and log the chunk — then commit. A retried
 * or zombie attempt serializes on the row lock and continues from the committed cursor, so
 * a chunk is never applied or counted twice.
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { describePgError, isDataError, isPgError, summarizePgError } from '../db/errors';
import { checkpoint, countConcurrentChange, finishPartition, getPartition, lockPartition, recordChunk, type PartitionRow } from '../ledger/partitions';
import { awaitWriterTurn } from '../ledger/writer-lock';
import type { ChunkRecordDecision } from '../governor';
import { FailureType } from '../shared/failures';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS } from '../shared/limits';
import { limitChunkTransaction } from '../db/session';
import { boundsText } from '../compiler/partition-predicate';
import type { PartitionBounds } from '../shared/types';
import type { RunContext } from './run-context';
import { revertChunk } from './revert-chunk';
import { captureBeforeImages, imagesDiffer } from './chunk-images';
import { TransformError } from '../transforms/transform-error';
import { fillOutput } from './fill-output';
import type { OutputTable } from '../transforms/module-fill';
import { readOutputKeyRange } from '../db/output-key-range';
import type { OutputKeyRange } from '../compiler/target-join';

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

export interface ChunkOutcome {
  row: PartitionRow;
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
  /** Time spent waiting for the run's writer lock before the chunk began. */
  turnMs: number;
  /** The chunk gave up waiting for a lock after LOCK_TIMEOUT_MS and rolled back; says on what. */
  lockTimeout?: string;
  /**
   * Another transaction changed rows this chunk read or writes after its snapshot (SQLSTATE
   * 40001, or a deadlock 40P01): it rolled back, to be computed again from the new state.
   */
  concurrentChange?: string;
  /** A statement ran past limits.statementTimeoutSeconds: rolled back, to be tried smaller. */
  statementTimeout?: string;
  /** The database cannot take writes (disk full): the run should pause for an operator, not retry. */
  pauseRun?: string;
}

/** How long a chunk waits for any lock before it rolls back and the partition holds instead. */
const LOCK_TIMEOUT_MS = 2000;
/** How long a chunk waits for its turn when the run's partitions write one at a time. */
const WRITER_WAIT_MS = 60_000;

/** Output tables created in a session, remembered only after the creating transaction commits. */
const createdTables = new WeakMap<pg.PoolClient, Map<string, OutputTable>>();

export async function runChunk(pool: pg.Pool, ctx: RunContext, request: ChunkRequest): Promise<ChunkOutcome> {
  const { compiled, spec } = ctx;
  const { runId, partitionId } = request;
  const replace = spec.target.mode === 'replace';
  const statementTimeoutSeconds = spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS;
  const client = await pool.connect();
  let cursor: string | null = null;
  let hi: string | null = null;
  let bounds: PartitionRow['bounds'] | undefined;
  let broken: Error | undefined;
  let chunkStarted = Date.now();
  let turnMs = 0;
  const nothing = (row: PartitionRow) => ({ row, rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0, turnMs });
  try {
    // one snapshot for the whole chunk: the transform's input and the write are one state of the
    // database, and a target row another transaction changed after that snapshot makes the write
    // fail (40001) instead of overwriting the change with a value computed from older input
    // a lock wait must end as a lock timeout (the partition holds and looks again), never as a
    // statement timeout, which would shrink the chunk and at the floor fail the partition
    const limits = { lockTimeoutMs: Math.min(LOCK_TIMEOUT_MS, statementTimeoutSeconds * 500), statementTimeoutMs: statementTimeoutSeconds * 1000 };
    if (request.oneWriter) {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await awaitWriterTurn(client, runId, WRITER_WAIT_MS);
      // waiting for our turn is not the chunk's cost: the pace after it is measured on the work alone
      turnMs = Date.now() - chunkStarted;
      chunkStarted = Date.now();
      await limitChunkTransaction(client, limits);
    } else {
      await limitChunkTransaction(client, limits, { begin: true });
    }
    const locked = await lockPartition(client, runId, partitionId);
    if (locked.status !== 'running') {
      // another attempt finished it while we waited for the lock
      await client.query('COMMIT');
      return nothing(locked);
    }
    cursor = locked.cursor;
    bounds = locked.bounds;
    if (ctx.revert) {
      const reverted = await revertChunk(client, ctx, request, locked, chunkStarted);
      hi = reverted.hi;
      await client.query(`${commitDurability(reverted.done, spec.limits.flushEveryChunk)}COMMIT; RESET ALL`);
      if (reverted.failure) throw ApplicationFailure.nonRetryable(reverted.failure, FailureType.DataError);
      return { row: reverted.row, ...reverted.counts, turnMs };
    }
    // replace mode computes the whole partition at once: a rollup must see all of its rows
    const limit = replace ? 2_147_483_647 : request.chunkSize;
    const b = compiled.chunkBounds(bounds, replace ? null : cursor, limit);
    const { rows } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
    const rowsRead = rows[0].n;
    hi = rows[0].hi;
    if (rowsRead === 0 && !replace) {
      const row = await finishPartition(client, runId, partitionId, 'succeeded');
      await client.query('COMMIT');
      return nothing(row);
    }

    const created = createdTables.get(client) ?? new Map<string, OutputTable>();
    let table = created.get(compiled.outputTable);
    if (!table) {
      await client.query(compiled.createOutputTable);
      table = {};
    }
    const rowsOut = await fillOutput(client, ctx, table, bounds, replace ? null : cursor, hi);
    if (replace) await refuseRowsOutsidePartition(client, ctx, partitionId, bounds);
    const range = await readOutputKeyRange(client, compiled);
    const imaged = await captureBeforeImages(client, ctx, bounds, range);
    let rowsWritten = 0;
    for (const statement of compiled.write(bounds, range)) {
      rowsWritten += (await client.query(statement.text, statement.values)).rowCount ?? 0;
    }
    if (imaged !== null && imaged !== rowsWritten) throw imagesDiffer(ctx, imaged, rowsWritten);
    const rowsSkipped = await reconcile(client, ctx, partitionId, range);
    const counts = { rowsRead, rowsWritten, rowsUnchanged: Math.max(0, rowsOut - rowsWritten - rowsSkipped), rowsSkipped };
    const checkpointed = await checkpoint(client, runId, partitionId, hi ?? cursor, counts);
    await recordChunk(client, runId, partitionId, {
      seq: locked.chunks + 1,
      keyFrom: replace ? null : cursor,
      keyTo: hi,
      counts,
      chunkSize: limit,
      durationMs: Date.now() - chunkStarted,
      waitMs: request.record.waitMs + turnMs,
      governedBy: request.record.governedBy,
      guardValue: request.record.guardValue,
      worker: request.worker,
    });
    // a short chunk is the last one: finishing in the same transaction saves an empty round
    const done = replace || rowsRead < request.chunkSize;
    const row = done ? await finishPartition(client, runId, partitionId, 'succeeded') : checkpointed;
    // RESET ALL in the same round trip: a set_config(…, false) in spec SQL must not outlive its
    // chunk on this pooled session (a rolled-back chunk undoes it by itself)
    await client.query(`${commitDurability(done, spec.limits.flushEveryChunk)}COMMIT; RESET ALL`);
    created.set(compiled.outputTable, table);
    createdTables.set(client, created);
    return { row, ...counts, turnMs };
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    if (isPgError(err) && err.code === '55P03') {
      return { ...nothing((await getPartition(client, runId, partitionId))!), lockTimeout: summarizePgError(err) };
    }
    if (isPgError(err) && err.code === '53100') {
      // a full disk will not empty itself by retrying: hold everything for an operator
      return {
        ...nothing((await getPartition(pool, runId, partitionId))!),
        pauseRun: `the database cannot write: ${summarizePgError(err)}; free space, then: backfill resume ${runId}`,
      };
    }
    if (isPgError(err) && (err.code === '40001' || err.code === '40P01')) {
      const row = await countConcurrentChange(pool, runId, partitionId);
      return { ...nothing(row), concurrentChange: summarizePgError(err) };
    }
    // 57014: our statement_timeout (or an operator's pg_cancel_backend); 25P03: a TypeScript transform outlasted the idle timeout
    if (isPgError(err) && (err.code === '57014' || err.code === '25P03')) {
      // the same chunk would only time out again: try it smaller, until the floor
      if (!replace && !request.failOnTimeout) return { ...nothing((await getPartition(pool, runId, partitionId))!), statementTimeout: summarizePgError(err) };
      const range = compiled.describeRange(bounds, cursor, hi);
      const message =
        `partition ${partitionId} failed at ${range}: a statement was cancelled after running up to limits.statementTimeoutSeconds (${statementTimeoutSeconds} s)` +
        `${replace ? ' (replace mode computes a whole partition in one statement)' : ` even in chunks of ${request.chunkSize} rows`}, or by an operator; ` +
        `${replace ? 'use smaller partitions' : 'lower limits.chunkSize'} or raise the timeout, then: backfill retry-failed ${runId}`;
      await finishPartition(pool, runId, partitionId, 'failed', { message, range, detail: `${message} (${describePgError(err)})` });
      throw ApplicationFailure.nonRetryable(message, FailureType.DataError);
    }
    if (isDataError(err) || err instanceof TransformError) {
      const range = compiled.describeRange(bounds, cursor, hi);
      // the summary travels through Temporal (results, failures, the Web UI); the full error —
      // "Failing row contains (…)", the transform's own message — stays in the ledger
      const at = `partition ${partitionId} failed at ${range}`;
      const summary = err instanceof TransformError ? err.summary : summarizePgError(err);
      const message = `${at}: ${summary}; the full error is in the ledger: backfill status ${runId}`;
      const detail = `${at}: ${err instanceof TransformError ? err.message : describePgError(err)}`;
      await finishPartition(pool, runId, partitionId, 'failed', { message, range, detail });
      throw ApplicationFailure.nonRetryable(message, FailureType.DataError);
    }
    throw err;
  } finally {
    client.release(broken);
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
export function commitDurability(finishesPartition: boolean, flushEveryChunk = false): string {
  return finishesPartition || flushEveryChunk ? '' : 'SET LOCAL synchronous_commit = off; ';
}

/**
 * Replace mode deletes and rewrites exactly its partition's target rows. An output row that
 * belongs to another partition (6-hour partitions feeding a daily rollup, a day computed in
 * another time zone) would overwrite what that partition computed: the chunk writes nothing
 * and the partition fails, saying how to partition instead.
 */
async function refuseRowsOutsidePartition(client: pg.PoolClient, ctx: RunContext, partitionId: string, bounds: PartitionRow['bounds']): Promise<void> {
  const check = ctx.compiled.outsidePartition(bounds);
  const { rows } = await client.query<{ key: string; value: string | null; total: string }>(check.text, check.values);
  if (rows.length === 0) return;
  const pcol = ctx.spec.target.partitionColumn!;
  const what =
    `the transform produced ${rows[0].total} row(s) whose ${pcol} lies outside partition ${partitionId}; ` +
    'replace mode may only write rows of the partition that computed them: partition at the grain of the target (for a daily rollup, time partitions of "1 day", with partition.timeZone set to the zone the days are computed in; UTC by default)';
  // values and keys are row data: the ledger's detail only
  const examples = rows.map((r) => `${pcol} = ${r.value ?? 'NULL'} (key ${r.key})`).join(', ');
  throw new TransformError(`${what}; the partition holds ${boundsText({ ...bounds, column: pcol } as PartitionBounds)}; for example ${examples}`, what);
}

/**
 * Reconciliation, on every chunk, before it commits: the target must now hold the output rows
 * as the transform computed them (all of them when the target has triggers or rules, else a
 * fixed 1-in-16 sample of keys: see CompiledRun.reconcile). Update mode may skip output rows
 * whose key the target lacks (it only updates); they are counted exactly, never silently
 * dropped. Any other difference fails the partition, with the first keys in the ledger.
 */
async function reconcile(client: pg.PoolClient, ctx: RunContext, partitionId: string, range: OutputKeyRange | null): Promise<number> {
  const check = ctx.compiled.reconcile(range);
  const { rows } = await client.query<{ missing: string; differing: string; examples: string[] | null }>(check.text, check.values);
  const mode = ctx.spec.target.mode;
  const missing = Number(rows[0].missing);
  const differing = Number(rows[0].differing);
  if (differing === 0 && (missing === 0 || mode === 'update')) {
    if (mode !== 'update') return 0;
    if (ctx.run.shape.targetRewrites) return missing; // every row was compared: exact already
    // the sample saw some; the skipped count must be exact
    const absent = ctx.compiled.countAbsent();
    return Number((await client.query<{ n: string }>(absent.text, absent.values)).rows[0].n);
  }
  const target = ctx.spec.target.table;
  const what =
    `reconciliation failed: after the write, ${target} does not hold what the transform computed for ` +
    [differing ? `${differing} row(s) (other values)` : '', missing && mode !== 'update' ? `${missing} row(s) (absent)` : ''].filter(Boolean).join(' and ') +
    `; a trigger or rule on ${target} may be rewriting them. Nothing of this chunk was committed`;
  throw new TransformError(`${what}; keys: ${(rows[0].examples ?? []).join(', ')}`, `${what} (partition ${partitionId}; keys in the ledger)`);
}
