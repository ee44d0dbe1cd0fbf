/**
 * runAfterActions: the run workflow's last step when the run succeeded and its spec lists
 * after-actions (src/downstream/after-actions.ts). It never fails the run: a failed action
 * is recorded and reported as `downstream: failed`.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Refused, runAfterActions } from '../downstream/after-actions';
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
  };
}
