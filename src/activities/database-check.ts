/**
 * The run's database against the one this worker's variable reaches. A mismatch is retried,
 * not failed: another worker on the task queue, connected to the right database, takes the
 * attempt; until one does, the activity's last failure says which worker points where.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { databaseIdentity } from '../db/identity';
import { FailureType } from '../shared/failures';

const known = new WeakMap<pg.Pool, Promise<{ id: string; label: string }>>();

export async function refuseOtherDatabase(pool: pg.Pool, expected: string | null | undefined, runId: string, variable: string): Promise<void> {
  if (!expected) return; // runs started before identities were recorded
  let here = known.get(pool);
  if (!here) {
    here = databaseIdentity(pool);
    here.catch(() => known.delete(pool));
    known.set(pool, here);
  }
  const { id, label } = await here;
  if (id === expected) return;
  throw wrongDatabase(
    `run ${runId} belongs to database ${expected}, but ${variable} on this worker reaches ${label} (${id}); ` +
      `this worker will not touch it, a worker whose ${variable} points at the run's database will. Check ${variable} on every worker of the task queue`,
  );
}

/** The retryable refusal of a worker connected elsewhere (also: a run missing from this worker's ledger). */
export function wrongDatabase(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.WrongDatabase,
    nonRetryable: false,
    // soon, not after the policy's doubling backoff: another worker may take the next attempt
    // at once; slower as refusals add up, so a queue of wrong workers alone does not spin
    nextRetryDelay: Math.min(250 * attemptNumber(), 10_000),
    message,
  });
}

function attemptNumber(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1; // outside an activity (never in the worker): the first attempt's delay
  }
}
