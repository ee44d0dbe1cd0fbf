/**
 * backfill.rate_limits: a token bucket per run, in PostgreSQL, so `limits.rowsPerSecond` is
 * one budget across every worker process of the run. A chunk reserves its rows before it
 * runs and waits out any debt; the rows it did not use are given back after it commits.
 * The bucket holds at most a quarter second of budget (or one chunk, if larger), so a pause or
 * a CPU-starved worker cannot bank a burst: over any window of T seconds a run writes at most
 * rowsPerSecond × (T + 0.25) rows, and the long-run rate is unchanged (waiting workers hold debt).
 */
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

/** Reserves `rows` at `rate` rows/s; returns how many milliseconds to wait before using them. */
export async function reserveRows(db: Queryable, runId: string, rows: number, rate: number): Promise<number> {
  const capacity = Math.max(rate / 4, rows);
  const { rows: result } = await db.query<{ tokens: number }>(
    `INSERT INTO backfill.rate_limits AS b (run_id, tokens, refreshed_at) VALUES ($1, $2::float8 - $4::float8, clock_timestamp())
     ON CONFLICT (run_id) DO UPDATE SET
       tokens = least($2::float8, b.tokens + $3::float8 * extract(epoch FROM clock_timestamp() - b.refreshed_at)) - $4::float8,
       refreshed_at = clock_timestamp()
     RETURNING tokens`,
    [runId, capacity, rate, rows],
  );
  const tokens = result[0].tokens;
  return tokens >= 0 ? 0 : Math.ceil((-tokens / rate) * 1000);
}

/**
 * Settles a chunk against its reservation: gives back rows it reserved but did not read, or
 * (negative) charges rows read beyond it, such as a whole replace-mode partition.
 */
export async function refundRows(db: Queryable, runId: string, rows: number): Promise<void> {
  if (rows === 0) return;
  await db.query('UPDATE backfill.rate_limits SET tokens = tokens + $2::float8 WHERE run_id = $1', [runId, rows]);
}

/** Drops the run's bucket (cleanup); returns how many rows went. */
export async function deleteRateLimits(db: Queryable, runId: string): Promise<number> {
  return (await db.query('DELETE FROM backfill.rate_limits WHERE run_id = $1', [runId])).rowCount ?? 0;
}
