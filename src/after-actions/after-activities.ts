/**
 * runAfterActions and cleanupRun: the run workflow's last steps when the run succeeded and its spec lists
 * after-actions (src/after-actions/run-actions.ts). It never fails the run: a failed action
 * is recorded and reported as `downstream: failed`.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Refused, runAfterActions } from './run-actions';
import { cleanupRefusal, cleanupRun } from '../after-actions/cleanup-run';
import { FailureType } from '../domain/failures';
import type { ActivityDeps } from '../activities/deps';
import { recordProgress } from '../activities/heartbeat-ticker';

export function afterActivities(deps: ActivityDeps) {
  return {
    async runAfterActions(input: { database: string; runId: string }): Promise<{ downstream: 'succeeded' | 'failed' }> {
      try {
        const outcome = await runAfterActions(deps.pools.get(input.database), input.runId, {
          trust: deps.trust,
          logger: deps.logger,
          actor: 'backfill',
          onTry: () => recordProgress(),
        });
        return { downstream: outcome.downstream };
      } catch (err) {
        if (err instanceof Refused) throw ApplicationFailure.nonRetryable(err.message, FailureType.SpecInvalid);
        throw err;
      }
    },

    /** Removes the run's temporary state once it may go; says why not otherwise (never fails the run). */
    async cleanupRun(input: { database: string; runId: string }): Promise<{ cleaned: boolean; refusal?: string }> {
      const pool = deps.pools.get(input.database);
      const refusal = await cleanupRefusal(pool, input.runId);
      if (refusal) return { cleaned: false, refusal };
      await cleanupRun(pool, input.runId, 'backfill');
      return { cleaned: true };
    },
  };
}
