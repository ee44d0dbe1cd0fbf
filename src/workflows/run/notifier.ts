/**
 * A run whose spec has `notify:` (or whose registering worker has BACKFILL_NOTIFY) starts its notifier (backfill-notify.ts) once it is registered:
 * an abandoned child, on the run's database queue, one per attempt, so that telling people never
 * fails or slows the run. Executions recorded before 'notifier', and runs without `notify:`,
 * start none.
 */
import { ParentClosePolicy, patched, startChild, workflowInfo } from '@temporalio/workflow';
import { backfillNotifyWorkflow } from '../backfill-notify';
import type { RunExecution } from './execution';

export async function startNotifier(x: RunExecution): Promise<void> {
  const targets = x.spec.notify ?? x.workerNotify;
  if (!targets?.length || !patched('notifier')) return;
  const attempt = x.input.kind === 'retry' ? x.input.attempt : 1;
  try {
    await startChild(backfillNotifyWorkflow, {
      workflowId: `${workflowInfo().workflowId}/notify/${attempt}`,
      args: [
        {
          database: x.database,
          ...(x.input.databaseQueue ? { databaseQueue: x.input.databaseQueue } : {}),
          runId: x.runId,
          name: x.spec.name,
          targets,
          ...(x.input.notifyPollMs ? { pollMs: x.input.notifyPollMs } : {}),
        },
      ],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      ...(x.input.databaseQueue ? { taskQueue: x.input.databaseQueue } : {}),
      staticSummary: `notifications of ${x.spec.name}/${x.runId}`,
    });
  } catch {
    // already started (by an earlier try of this attempt), or refused: the run goes on without it
  }
}
