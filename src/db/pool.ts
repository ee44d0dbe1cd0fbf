/**
 * The only place that builds a pg.Pool. Every connection runs in UTC so that time
 * partition bounds mean the same thing on every worker, and names itself so operators
 * can find backfill sessions in pg_stat_activity.
 */
import pg from 'pg';

export interface PoolOptions {
  max?: number;
  applicationName?: string;
}

export const CONNECT_TIMEOUT_MS = 20_000;

export function createPool(connectionString: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'backfill',
    options: '-c TimeZone=UTC',
    idleTimeoutMillis: 30_000,
    // a connection attempt that gets no answer (a pooler accepting while its server is down, a
    // black-holed network) fails after this and is retried, instead of waiting forever while the
    // activity's heartbeat says it is alive
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // an idle client losing its connection must not crash the worker; the next checkout reconnects
  pool.on('error', () => undefined);
  // nor may a checked-out one (a backend terminated between two queries, a restart): without a
  // listener its 'error' event would end the process; the failure reaches the next query instead
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Reads the URL from the environment variable a spec names; errors say which variable and what to do. */
export function databaseUrlFrom(envVar: string, env: NodeJS.ProcessEnv = process.env): string {
  const url = env[envVar];
  if (!url) {
    throw new Error(`environment variable ${envVar} (named by the spec's database field) is not set; export it with the PostgreSQL URL`);
  }
  return url;
}

/**
 * One pooled client for `fn`. A client whose work failed is discarded instead of returned to
 * the pool: a failure may have left its connection broken or mid-transaction, and the next
 * caller must never inherit either.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    return await fn(client);
  } catch (err) {
    failed = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(failed);
  }
}

export interface TransactionOptions {
  /** The statement that opens it, with its isolation and access mode (our own SQL, never spec SQL); default BEGIN. */
  begin?: string;
  /** statement_timeout for the transaction (SET LOCAL, in the same round trip as the BEGIN). */
  statementTimeoutMs?: number;
  /** commit: COMMIT on success; rollback: always rolled back (checks, estimates). */
  end: 'commit' | 'rollback';
}

/**
 * `fn` in one transaction on one pooled client, rolled back on any error; a client whose
 * ROLLBACK failed is discarded, not reused. Every transaction outside a chunk goes through here.
 */
export async function inTransaction<T>(pool: pg.Pool, options: TransactionOptions, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // after a failed COMMIT too: a ROLLBACK that fails there means the connection is gone
  let rollback = options.end === 'rollback';
  try {
    const timeout = options.statementTimeoutMs === undefined ? '' : `; SET LOCAL statement_timeout = ${Math.max(1, Math.round(options.statementTimeoutMs))}`;
    await client.query(`${options.begin ?? 'BEGIN'}${timeout}`);
    const result = await fn(client);
    if (options.end === 'commit') await client.query('COMMIT');
    return result;
  } catch (err) {
    rollback = true;
    throw err;
  } finally {
    if (rollback) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
    client.release(broken);
  }
}

/** BEGIN … COMMIT, ROLLBACK on any error. */
export function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, { end: 'commit' }, fn);
}
