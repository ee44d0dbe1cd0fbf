/**
 * What every fleet test asks of a member once its fleet has ended: its target exactly what one
 * statement over its source gives, every partition succeeded, every chunk written by the worker
 * next to its database, and no key range committed twice (a resume went on from checkpoints).
 */
import type pg from 'pg';
import { diffAgainstExpected } from './orders';

export async function expectMemberExact(pool: pg.Pool, variable: string, runId: string): Promise<void> {
  expect(await diffAgainstExpected(pool)).toMatchObject({ missing: 0, extra: 0 });
  const { rows } = await pool.query<{ n: number; worker: string[]; twice: number; read: number; total: number }>(
    `SELECT (SELECT count(*)::int FROM backfill.partitions WHERE run_id = $1 AND (status <> 'succeeded' OR last_error IS NOT NULL)) AS n,
            (SELECT array_agg(DISTINCT worker) FROM backfill.chunks WHERE run_id = $1) AS worker,
            (SELECT count(*)::int FROM (SELECT 1 FROM backfill.chunks WHERE run_id = $1 GROUP BY partition_id, key_from HAVING count(*) > 1) x) AS twice,
            (SELECT sum(rows_read)::int FROM backfill.chunks WHERE run_id = $1) AS read,
            (SELECT sum(rows_read)::int FROM backfill.partitions WHERE run_id = $1) AS total`,
    [runId],
  );
  expect(rows[0]).toMatchObject({ n: 0, worker: [`worker-${variable}`], twice: 0 });
  expect(rows[0].read).toBe(rows[0].total);
}
