/**
 * The run's database against the one this worker's variable reaches. A mismatch is retried,
 * not failed: another worker on the task queue, connected to the right database, takes the
 * attempt; until one does, the activity's last failure says which worker points where.
 *
 * Every activity of a registered run passes through onTheRunsDatabase before it reads or
 * writes anything: the run's bookkeeping as much as its chunks. Without it a worker pointed
 * elsewhere met a missing ledger (42P01), which the database refusal rule fails at once, and
 * failed a run whose own database was fine; or met another ledger and wrote there.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import type { PoolRegistry } from '../db/pool-registry';
import { databaseIdentity } from '../db/identity';
import { getRun, type RunRow } from '../ledger/runs';
import { FailureType } from '../domain/failures';

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

/**
 * The run as this worker's ledger holds it, once its database is known to be the run's:
 * no ledger, no such run, or another database's identity are all a worker pointed elsewhere.
 */
export async function runOnThisDatabase(pool: pg.Pool, runId: string): Promise<RunRow> {
  const run = await getRun(pool, runId).catch((err: { code?: string }) => {
    if (err.code === '42P01') return undefined; // no ledger at all in the database this worker reaches
    throw err;
  });
  if (!run) {
    throw wrongDatabase(
      `run ${runId} is not in the ledger of the database this worker reaches; was it registered against another one? Check the database variables of this worker`,
    );
  }
  // a ledger restored or copied elsewhere holds the run too: the database's identity decides
  await refuseOtherDatabase(pool, run.database_identity, runId, run.database_var);
  return run;
}

interface RunInput {
  database: string;
  runId: string;
}
// a method's parameter is checked both ways: an activity whose input adds fields to RunInput fits
type RunActivity = { activity(input: RunInput): Promise<unknown> }['activity'];

const VERIFIED_RUNS_KEPT = 1000;

/**
 * Wraps activities whose input names a registered run ({ database, runId }): the first call for
 * a run on this worker checks its database, later ones reuse the verdict (a run's database
 * never changes; a refusal is not kept, so a corrected variable is seen on the next attempt).
 */
export function onTheRunsDatabase<T extends Record<string, RunActivity>>(pools: PoolRegistry, activities: T): T {
  const verified = new WeakMap<pg.Pool, Map<string, Promise<unknown>>>();
  const check = (pool: pg.Pool, runId: string): Promise<unknown> => {
    let runs = verified.get(pool);
    if (!runs) verified.set(pool, (runs = new Map()));
    let done = runs.get(runId);
    if (!done) {
      done = runOnThisDatabase(pool, runId);
      done.catch(() => runs.delete(runId));
      runs.set(runId, done);
      // a long-lived worker sees run after run: forget the oldest (it is checked again if it comes back)
      if (runs.size > VERIFIED_RUNS_KEPT) runs.delete(runs.keys().next().value!);
    }
    return done;
  };
  const wrapped: Record<string, RunActivity> = {};
  for (const [name, activity] of Object.entries(activities)) {
    wrapped[name] = {
      // the function keeps its name: Temporal registers activities by their keys, logs by theirs
      async [name](input: RunInput) {
        // the input came through Temporal, from whoever could start or signal a workflow
        if (typeof input?.database !== 'string' || typeof input.runId !== 'string') {
          throw ApplicationFailure.nonRetryable(`${name} was called without the run's database and id`, FailureType.SpecInvalid);
        }
        await check(pools.get(input.database), input.runId);
        return activity(input);
      },
    }[name];
  }
  return wrapped as T;
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
