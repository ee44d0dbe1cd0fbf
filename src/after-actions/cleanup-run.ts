/**
 * Temporary state goes only once the result is proven and downstream is refreshed: the run
 * succeeded (every gate of its final check passed) and its after-actions, if any, succeeded.
 * What a run leaves behind that is not audit record — its rate-limit bucket, and its
 * before-images once its revert window has passed (docs/undo.md) — is removed; run metadata, the
 * chunk log, gate results and distribution captures stay. Each
 * chunk's output table is private to its database session and goes with the session.
 */
import type pg from 'pg';
import { recordEvent } from '../ledger/events';
import { gateResults } from '../ledger/gates';
import { getRun, markCleaned } from '../ledger/runs';
import { deleteRateLimits } from '../ledger/rate-limits';
import { dropExpiredImages } from '../ledger/before-images';

/** Why the run's temporary state must stay, or undefined when it may go. */
export async function cleanupRefusal(pool: pg.Pool | pg.PoolClient, runId: string): Promise<string | undefined> {
  const run = await getRun(pool, runId);
  if (!run) return `run ${runId} is not in the ledger`;
  if (run.status !== 'succeeded') return `run ${runId} is ${run.status}: its state stays until it is verified (it must end succeeded)`;
  const failed = (await gateResults(pool, runId, 'final')).filter((g) => g.attempt === run.attempt && !g.passed);
  if (failed.length > 0) return `run ${runId} failed its final check (${failed[0].gate})`;
  if ((run.spec.after?.length ?? 0) > 0 && run.downstream !== 'succeeded') {
    return `the after-actions of run ${runId} have ${run.downstream === 'failed' ? 'failed' : 'not run'}; run them first: backfill after ${runId}`;
  }
  return undefined;
}

export interface CleanedUp {
  removed: { rateLimits: number; images: boolean };
  /** The run's before-images stay until then (its revert window), or while a revert reads them. */
  imagesKept?: { until?: string; reverting?: string };
}

export async function cleanupRun(pool: pg.Pool | pg.PoolClient, runId: string, actor: string): Promise<CleanedUp> {
  const refusal = await cleanupRefusal(pool, runId);
  if (refusal) throw new CleanupRefused(refusal);
  const rateLimits = await deleteRateLimits(pool, runId);
  const images = await dropExpiredImages(pool, runId);
  const dropped = images?.dropped === true;
  await markCleaned(pool, runId);
  await recordEvent(pool, { runId, key: 'cleaned', kind: 'cleaned', actor, detail: { rateLimits } });
  // dropping images is its own event: a later cleanup, after the window, does it
  if (dropped) await recordEvent(pool, { runId, key: 'images-dropped', kind: 'images-dropped', actor });
  const kept = images && !images.dropped ? { imagesKept: { until: images.until?.toISOString(), reverting: images.reverting } } : {};
  return { removed: { rateLimits, images: dropped }, ...kept };
}

export class CleanupRefused extends Error {}
