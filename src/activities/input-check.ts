/**
 * Before each partition: have the tables and functions the run's SQL transform reads changed
 * since the run started (or since an operator last accepted a change)? A change is a reason
 * to hold the run, not to fail it: the operator decides whether the new input is right.
 */
import { resolveSpec } from '../specs/resolve';
import type pg from 'pg';
import { acceptedInputs, type RunRow } from '../ledger/runs';
import { inputChanges } from '../preflight/input-fingerprints';
import { runInputs } from '../preflight/run-inputs';

export const INPUT_CHANGE_ACTOR = 'backfill (input check)';

/** The hold reason when an input changed, else undefined. */
export async function inputChangeHold(pool: pg.Pool, run: RunRow): Promise<string | undefined> {
  if (run.transform_kind !== 'sql' || !run.input_fingerprints || run.input_fingerprints.length === 0) return undefined;
  // the accepted fingerprints are read fresh: an acceptance replaces them while this worker caches the run
  const changes = inputChanges(await acceptedInputs(pool, run.run_id), await runInputs(pool, resolveSpec(run.spec), run.shape));
  if (changes.length === 0) return undefined;
  return `input changed since the run started: ${changes.join('; ')}. Resume with --accept-input-change --reason "…" to go on with the changed input, or cancel`;
}
