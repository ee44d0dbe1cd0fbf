/**
 * backfillRunWorkflow: the heart of a run. Registers the run, then keeps at most
 * `limits.concurrency` partition workflows in flight (a sliding window over the plan,
 * paged from the ledger so history never holds the plan), and finalizes the run.
 * Its state and every change to it live in run-state.ts and gate-state.ts; the phases in
 * run/ wire them to Temporal, in the order this function reads.
 *
 * - Partitions are workflows of their own, started by a local activity (children with
 *   ParentClosePolicy.ABANDON in executions recorded before 'partitions-started-alone'), and
 *   report by signal to this workflow id; a report for a partition that is not in flight is a
 *   duplicate and is ignored.
 * - Operator decisions (pause, resume, cancel, limits) change state here first and are
 *   then written to the ledger by one activity at a time, which running partitions read.
 * - A Temporal cancellation of this workflow is turned into an orderly cancel.
 */
import { CancellationScope } from '@temporalio/workflow';
import { holdWhileHeld, runCanary } from './run/canary';
import { RunExecution } from './run/execution';
import { finishRun } from './run/finish';
import { installHandlers } from './run/handlers';
import { openRun } from './run/open';
import { startNotifier } from './run/notifier';
import { runPartitions } from './run/sliding-window';
import { reconcileLoop } from './run/reconcile';
import { watchDatabaseWorkers } from './run/worker-watch';
import { runInputOf, type RecordedRunInput, type RunResult } from './run/input';

export type { RunState } from './run-state';
export type { BackfillRunInput, RetryRunInput, RevertRunInput, RunResult, RunWorkflowInput } from './run/input';

export async function backfillRunWorkflow(recorded: RecordedRunInput): Promise<RunResult> {
  const input = runInputOf(recorded);
  const x = new RunExecution(input);
  installHandlers(x);
  return CancellationScope.nonCancellable(async () => {
    if (!input.state) {
      await openRun(x);
      await startNotifier(x);
    }
    x.boundHistory();
    x.publishNow();
    if (x.reconciling) void reconcileLoop(x);
    void watchDatabaseWorkers(x);
    await runCanary(x);
    await holdWhileHeld(x);
    await runPartitions(x);
    return finishRun(x);
  });
}
