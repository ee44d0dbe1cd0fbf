/**
 * The run's activities (its ledger steps, checks and after-actions: workflows/run/proxies.ts)
 * heartbeat every few seconds while they work, not only between pages of work: a worker that
 * dies under one is then noticed within the proxies' short heartbeat timeout, where a heartbeat
 * per page needed one long enough for the slowest page, and a ledger step without heartbeats
 * waited out its start-to-close bound (minutes of a run held for nothing). A statement
 * that hangs is not kept alive for ever by the ticker: each runs under the run's statement
 * timeout.
 *
 * The ticker repeats the progress the activity last recorded (`recordProgress`), so a retry still
 * resumes from it; until then, the progress its attempt resumed from.
 */
import { Context } from '@temporalio/activity';
import { mapActivities, type Activity } from './map-activities';

/** Often enough for the run's heartbeat timeout (30 s, proxies.ts); the SDK throttles what it sends. */
const TICK_MS = 5_000;

const progress = new WeakMap<Context, { details: unknown }>();

/** The activity's progress so far: sent now, and repeated by the ticker. */
export function recordProgress(details?: unknown): void {
  const activity = Context.current();
  const held = progress.get(activity);
  if (held) held.details = details;
  activity.heartbeat(details);
}

/** Each activity of `activities` with a heartbeat ticker while it runs (none for a local attempt, which cannot heartbeat). */
export function withHeartbeatTicker<T extends Record<string, Activity>>(activities: T): T {
  return mapActivities(activities, async (_name, activity, args) => {
    const context = Context.current();
    if (context.info.isLocal) return activity(...args);
    const held = { details: context.info.heartbeatDetails as unknown };
    progress.set(context, held);
    const ticker = setInterval(() => context.heartbeat(held.details), TICK_MS);
    try {
      return await activity(...args);
    } finally {
      clearInterval(ticker);
      progress.delete(context);
    }
  });
}
