/**
 * backfill.distributions: the target columns' shapes (rows, NULLs, distinct values, mean,
 * quantiles, histogram) captured before a run writes and at its end, per attempt; what the
 * distribution gate compares and the report draws (src/gates/distributions.ts captures them).
 */
import type pg from 'pg';
import type { Capture } from '../gates/distributions';

export async function storeCapture(db: pg.Pool | pg.PoolClient, runId: string, attempt: number, stage: 'before' | 'after', c: Capture): Promise<void> {
  await db.query(
    `INSERT INTO backfill.distributions (run_id, attempt, stage, column_name, rows, nulls, distinct_values, mean, quantiles, min_value, max_value, histogram)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (run_id, attempt, stage, column_name) DO UPDATE SET rows = EXCLUDED.rows, nulls = EXCLUDED.nulls,
       distinct_values = EXCLUDED.distinct_values, mean = EXCLUDED.mean, quantiles = EXCLUDED.quantiles, min_value = EXCLUDED.min_value,
       max_value = EXCLUDED.max_value, histogram = EXCLUDED.histogram, captured_at = now()`,
    [runId, attempt, stage, c.column, c.rows, c.nulls, c.distinct, c.mean, c.quantiles, c.min, c.max, c.histogram ? JSON.stringify(c.histogram) : null],
  );
}

export async function loadCaptures(db: pg.Pool | pg.PoolClient, runId: string): Promise<(Capture & { stage: 'before' | 'after'; attempt: number })[]> {
  const { rows } = await db.query('SELECT * FROM backfill.distributions WHERE run_id = $1 ORDER BY column_name, attempt, stage DESC', [runId]);
  return rows.map((r) => ({
    stage: r.stage,
    attempt: r.attempt,
    column: r.column_name,
    rows: Number(r.rows),
    nulls: Number(r.nulls),
    distinct: Number(r.distinct_values),
    mean: r.mean,
    quantiles: r.quantiles,
    min: r.min_value,
    max: r.max_value,
    histogram: r.histogram,
  }));
}
