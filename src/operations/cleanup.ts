/**
 * `cleanup`: a verified run's temporary state removed by hand (runs remove it themselves when
 * their gates and after-actions succeeded; after-actions/cleanup-run.ts says what goes). A run
 * that is not yet proven is refused, saying why.
 */
import type pg from 'pg';
import { cleanupRun, CleanupRefused, type CleanedUp } from '../after-actions/cleanup-run';
import { UsageError } from '../domain/usage-error';
import type { RunRow } from '../ledger/runs';

export async function cleanupFinishedRun(pool: pg.Pool, run: RunRow, actor: string): Promise<CleanedUp> {
  try {
    return await cleanupRun(pool, run.run_id, actor);
  } catch (err) {
    if (err instanceof CleanupRefused) throw new UsageError(`cannot clean up yet: ${err.message}`);
    throw err;
  }
}
