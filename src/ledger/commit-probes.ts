/**
 * backfill.commit_probes: one row per backend that measured a commit for the commitMs guard
 * (src/preflight/guard-signals.ts times this write's commit). The row is rewritten in place, so the
 * table stays as small as the number of backends that ever probed.
 */
import type pg from 'pg';

export async function writeCommitProbe(client: pg.PoolClient): Promise<void> {
  await client.query(
    `INSERT INTO backfill.commit_probes (backend_pid, at) VALUES (pg_backend_pid(), now())
     ON CONFLICT (backend_pid) DO UPDATE SET at = EXCLUDED.at`,
  );
}

/** Whether the table exists: a database no run or `migrate` has touched has no ledger to probe in. */
export async function commitProbesExist(db: pg.Pool | pg.PoolClient): Promise<boolean> {
  const { rows } = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.commit_probes')::text AS t");
  return rows[0].t !== null;
}
