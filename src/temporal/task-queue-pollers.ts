/**
 * Whether any worker polls a task queue, from Temporal's list of its recent pollers: the
 * operator side asks it of a run's database queue (operations/database-workers.ts), and so does
 * the run itself, through an activity on the common queue (activities/database-workers.ts).
 * A worker that is up polls again at least once a minute, so a poller not seen for longer has gone.
 */
import type { WorkflowClient } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** A poll is answered within about 70 s (Temporal's long-poll bound); a worker not seen for longer is gone. */
const LIVE_MS = 90_000;

export interface DatabaseWorkers {
  /** A worker polled the queue within the last LIVE_MS. */
  serving: boolean;
  /** When a worker last polled it, or null when Temporal remembers none (it forgets pollers after a few minutes). */
  lastSeen: Date | null;
}

/** `workflows`: a Client's `workflow` (or a handle's `client`). */
export async function databaseWorkers(workflows: WorkflowClient, queue: string, now = Date.now()): Promise<DatabaseWorkers> {
  const seen: number[] = [];
  for (const taskQueueType of [temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]) {
    const { pollers } = await workflows.workflowService.describeTaskQueue({
      namespace: workflows.options.namespace,
      taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType,
    });
    for (const p of pollers ?? [])
      if (p.lastAccessTime) seen.push(Number(p.lastAccessTime.seconds ?? 0) * 1000 + Math.floor((p.lastAccessTime.nanos ?? 0) / 1e6));
  }
  const last = seen.length > 0 ? Math.max(...seen) : null;
  return { serving: last !== null && now - last < LIVE_MS, lastSeen: last === null ? null : new Date(last) };
}
