/**
 * `after`: a succeeded run's after-actions that have not succeeded yet, run again in order, as
 * the run's last step runs them (after-actions/run-actions.ts). Refused for a run that has none,
 * or that did not succeed (after-actions run only once every partition succeeded and every gate passed).
 */
import type pg from 'pg';
import { runAfterActions } from '../after-actions/run-actions';
import type { RunRow } from '../ledger/runs';
import { workerTrustFromEnv } from '../security/worker-trust';
import { runLabel } from '../domain/labels';
import { UsageError } from '../domain/usage-error';

export async function rerunAfterActions(pool: pg.Pool, run: RunRow, actor: string): ReturnType<typeof runAfterActions> {
  if ((run.spec.after?.length ?? 0) === 0) throw new UsageError(`run ${runLabel(run.name, run.run_id)} has no after-actions in its spec`);
  if (run.status !== 'succeeded')
    throw new UsageError(
      `run ${runLabel(run.name, run.run_id)} is ${run.status}: after-actions run only after every partition succeeded and every gate passed`,
    );
  return runAfterActions(pool, run.run_id, { trust: workerTrustFromEnv(), actor });
}
