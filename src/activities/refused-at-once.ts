/**
 * Every activity ends at once, not after retries, when the database refuses its statement in a
 * way no retry can change (db/errors.ts failsEveryTime: data, integrity, definition and
 * feature errors; never a missing privilege, a lost connection, a deadlock or a timeout, which
 * an operator or time can cure). What each caller then does with the refusal:
 *
 *   registerRun, startRunAttempt   the run fails before anything is written (one transaction)
 *   processPartition               the partition fails with the reason (the partition workflow
 *                                  records it); data errors inside a chunk name their key range
 *   check*, captureDistributions   the gate fails with the reason (gates.ts words it per check)
 *   runAfterActions, cleanupRun    the run stays succeeded; downstream is marked failed
 *   the run's bookkeeping          the run's workflow fails with the reason, visible in the Web
 *   (sync, next page, reconcile,   UI and `temporal workflow list`, instead of retrying for ever
 *   record failure, finalize)      with the run shown as running
 *
 * The message names the activity and the error's kind, table and column, never a row value:
 * it travels through Temporal (db/errors.ts summarizePgError).
 */
import { ApplicationFailure } from '@temporalio/common';
import { failsEveryTime, summarizePgError } from '../db/errors';
import { FailureType } from '../domain/failures';
import { mapActivities, type Activity } from './map-activities';

export function refusedAtOnce<T extends Record<string, Activity>>(activities: T): T {
  return mapActivities(activities, async (name, activity, args) => {
    try {
      return await activity(...args);
    } catch (err) {
      throw failsEveryTime(err) ? refusal(name, err) : err;
    }
  });
}

export function refusal(activityName: string, err: unknown): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${activityName} was refused by the database: ${summarizePgError(err)}. It would fail the same way on every attempt, so it was not retried: ` +
      "if the table named is one of the spec's, check it still matches the spec (backfill plan says how); if it is in the backfill schema, " +
      'the ledger and this worker are at different versions (backfill migrate, and deploy one version of workers); see the docs/troubleshooting.md "Failures"',
    FailureType.DatabaseRefused,
  );
}
