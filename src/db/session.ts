/**
 * How SQL runs, and under which limits. Spec SQL (transform, where, guards) always goes over
 * the extended protocol, where the server accepts exactly one statement, so text such as
 * `…; COMMIT; …` can never end the transaction it runs in; checks run read-only and rolled
 * back, under a statement_timeout. A chunk never waits long for a lock: were it to queue
 * behind another session's lock, every application query after it would queue too; it rolls
 * back instead (SQLSTATE 55P03) and the partition holds and looks again.
 */
import type pg from 'pg';
import { inTransaction } from './pool';

/** How long one check or guard reading may run before PostgreSQL cancels it. */
export const CHECK_TIMEOUT_MS = 30_000;

/**
 * The limits a chunk's transaction runs under, set LOCAL so they end with it: how long any
 * lock may be waited for, how long any one statement (the transform's included) may run,
 * and how long the transaction may sit idle while a TypeScript transform computes. With
 * `begin`, the transaction (REPEATABLE READ: one snapshot for the chunk) starts in the same
 * round trip.
 */
export async function limitChunkTransaction(
  client: pg.PoolClient,
  limits: { lockTimeoutMs: number; statementTimeoutMs: number },
  options: { begin?: boolean } = {},
): Promise<void> {
  const ms = (n: number) => Math.max(1, Math.round(n));
  await client.query(
    `${options.begin ? 'BEGIN ISOLATION LEVEL REPEATABLE READ; ' : ''}` +
      `SET LOCAL lock_timeout = ${ms(limits.lockTimeoutMs)}; SET LOCAL statement_timeout = ${ms(limits.statementTimeoutMs)}; ` +
      `SET LOCAL idle_in_transaction_session_timeout = ${ms(limits.statementTimeoutMs)}`,
  );
}

/** Runs one statement over the extended protocol (never several, whatever the text says). */
export function querySingle<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: pg.Pool | pg.PoolClient,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  return db.query<R>({ text, values, queryMode: 'extended' } as pg.QueryConfig);
}

/**
 * Runs `fn` in a transaction that is read-only, time-limited and always rolled back: whatever
 * spec SQL does in it (set_config included) is gone afterwards.
 */
export function inReadOnlyCheck<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, timeoutMs = CHECK_TIMEOUT_MS): Promise<T> {
  return inTransaction(pool, { begin: 'BEGIN READ ONLY', statementTimeoutMs: timeoutMs, end: 'rollback' }, fn);
}
