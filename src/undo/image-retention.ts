/**
 * Before-images are kept for their run's window (docs/undo.md), then dropped: by `backfill
 * cleanup`, and by every worker once a day for the databases it serves — the same cleanup, so
 * only a verified run's images go, never while a revert reads them. Several workers may sweep
 * at once: dropping is idempotent.
 */
import type { Logger } from 'pino';
import type pg from 'pg';
import { runsWithExpiredImages } from '../ledger/before-images';
import { cleanupRefusal, cleanupRun } from '../after-actions/cleanup-run';
import { servedDatabases } from '../security/worker-trust';

export const RETENTION_ACTOR = 'backfill (image retention)';
const DAY_MS = 24 * 60 * 60 * 1000;
/** The first sweep waits for the worker to settle; then once a day. */
const FIRST_SWEEP_MS = 10 * 60 * 1000;

/** Drops the images of every run on this database whose window has passed and that cleanup allows; returns their run ids. */
export async function sweepExpiredImages(pool: pg.Pool): Promise<string[]> {
  const dropped: string[] = [];
  for (const runId of await runsWithExpiredImages(pool)) {
    if (await cleanupRefusal(pool, runId)) continue;
    if ((await cleanupRun(pool, runId, RETENTION_ACTOR)).removed.images) dropped.push(runId);
  }
  return dropped;
}

/** Sweeps the databases the worker serves, at FIRST_SWEEP_MS and then daily; returns the stop function. */
export function scheduleImageRetention(databases: readonly string[], poolOf: (database: string) => pg.Pool, logger: Logger): () => void {
  const sweep = async () => {
    for (const database of servedDatabases(databases)) {
      try {
        const dropped = await sweepExpiredImages(poolOf(database));
        if (dropped.length > 0) logger.info({ database, runs: dropped }, 'dropped before-images past their revert window');
      } catch (err) {
        logger.warn({ database, error: (err as Error).message }, 'could not sweep before-images past their window; trying again tomorrow');
      }
    }
  };
  let daily: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void sweep();
    daily = setInterval(() => void sweep(), DAY_MS);
    daily.unref();
  }, FIRST_SWEEP_MS);
  first.unref();
  return () => {
    clearTimeout(first);
    if (daily) clearInterval(daily);
  };
}
