/**
 * Whether any worker serves a run's database queue (domain/ids.ts databaseTaskQueue), from
 * Temporal's list of the queue's recent pollers. `start`, `retry-failed` and `revert` refuse
 * before starting anything when none does; `status` and `watch` say a run is waiting for one.
 * A worker that is up polls again at least once a minute, so a poller not seen for longer has gone.
 */
import type { WorkflowClient } from '@temporalio/client';
import type { WorkerGap } from '../domain/types';
import { databaseWorkers } from '../temporal/task-queue-pollers';
import { pollUntil } from '../util/poll-until';

/** Why nobody would do a run's work, in the operator's words, with the way out. */
export function noWorkerMessage(variable: string, queue: string): string {
  return (
    `no worker serves ${variable} (task queue ${queue}): start one where ${variable} holds this database's URL, ` +
    `e.g. BACKFILL_DATABASES=${variable} backfill worker, then start again (docs/production.md "Workers and databases")`
  );
}

export class NoWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoWorkerError';
  }
}

/**
 * Returns once a worker polls `queue`, waiting up to `waitMs` for one that is starting (a worker
 * finds a new database's queue within seconds); throws NoWorkerError otherwise.
 */
export async function requireDatabaseWorker(workflows: WorkflowClient, queue: string, variable: string, waitMs = 10_000): Promise<void> {
  const serving = await pollUntil(async () => ((await databaseWorkers(workflows, queue)).serving ? true : undefined), { timeoutMs: waitMs, intervalMs: 250 });
  if (!serving) throw new NoWorkerError(noWorkerMessage(variable, queue));
}

export type { WorkerGap };

/** The run's gap, or undefined while a worker serves it (or the run is not running, or was started before routing). */
export async function runWorkerGap(workflows: WorkflowClient, workflowId: string): Promise<WorkerGap | undefined> {
  const described = await workflows.getHandle(workflowId).describe();
  if (described.status.name !== 'RUNNING') return undefined;
  const memo = (described.memo ?? {}) as { database?: string; databaseQueue?: string };
  if (!memo.databaseQueue || !memo.database) return undefined;
  const workers = await databaseWorkers(workflows, memo.databaseQueue);
  return workers.serving ? undefined : { database: memo.database, queue: memo.databaseQueue, since: workers.lastSeen?.toISOString() ?? null };
}

/** One line for status and watch. */
export function workerGapLine(gap: WorkerGap): string {
  const since = gap.since ? ` since ${gap.since.slice(11, 19)} UTC` : ' (none seen for minutes)';
  return `no worker serves ${gap.database}${since}: the run waits for one, nothing fails; start one where ${gap.database} is set: BACKFILL_DATABASES=${gap.database} backfill worker`;
}
