/**
 * The run's writer lock: while a soft guard slows a run, its chunks take turns, one
 * writer at a time across all workers. A transaction-scoped advisory lock on
 * (hashtext('backfill.writer'), hashtext(runId)); PostgreSQL queues waiters in order, so
 * partitions take turns fairly, and the lock goes with the chunk's transaction.
 */
import type pg from 'pg';

/** Waits (up to `waitMs`, then SQLSTATE 55P03) for the run's writer turn; call inside the chunk's transaction. */
export async function awaitWriterTurn(client: pg.PoolClient, runId: string, waitMs: number): Promise<void> {
  await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(waitMs))}`);
  await client.query("SELECT pg_advisory_xact_lock(hashtext('backfill.writer'), hashtext($1))", [runId]);
}
