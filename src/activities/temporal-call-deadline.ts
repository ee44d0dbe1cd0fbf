/**
 * Every call an activity makes to Temporal carries a deadline. Without one, a call can wait for
 * ever on a connection that stalled without a reset, and keep its activity, the worker's slot and
 * whatever awaits it (a partition finishing, a run's check) waiting with it. With one, the call
 * fails and what made it does what it does on any failure: retries, or lets another path report.
 */
import type { Client } from '@temporalio/client';

/** A signal or a describe: one server round trip, normally milliseconds. */
export const CALL_DEADLINE_MS = 10_000;

export function withCallDeadline<T>(client: Client, call: () => Promise<T>, deadlineMs = CALL_DEADLINE_MS): Promise<T> {
  return client.withDeadline(Date.now() + deadlineMs, call);
}
