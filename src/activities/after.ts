/**
 * runAfterActions and cleanupRun: the run workflow's last steps when the run succeeded and its spec lists
 * after-actions (src/downstream/after-actions.ts). It never fails the run: a failed action
 * is recorded and reported as `downstream: failed`.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Refused, runAfterActions } from '../downstream/after-actions';
import { cleanupRefusal, cleanupRun } from '../downstream/cleanup';
import { FailureType } from '../shared/failures';
import type { ActivityDeps } from './deps';

export function afterActivities(deps: ActivityDeps) {
  return {
    async runAfterActions(input: { database: string; runId: string }): Promise<{ downstream: 'succeeded' | 'failed' }> {
      const activity = Context.current();
      try {
        const outcome = await runAfterActions(deps.pools.get(input.database), input.runId, {
          trust: deps.trust,
          logger: deps.logger,
          actor: 'backfill',
          onTry: () => activity.heartbeat(),
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
