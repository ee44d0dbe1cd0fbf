/**
 * findWorkerGap: whether any worker polls a run's database queue, asked of Temporal through the
 * worker's own client. Runs on the common queue (it touches no database), for the run workflow's
 * watch (workflows/run/worker-watch.ts), which shows a gap in the Web UI's current details.
 * Reads only; any number of attempts give the same kind of answer.
 */
import { Context } from '@temporalio/activity';
import type { WorkerGap } from '../domain/types';
import { databaseWorkers } from '../temporal/task-queue-pollers';
import { withCallDeadline } from './temporal-call-deadline';

export async function findWorkerGap(input: { database: string; queue: string }): Promise<WorkerGap | null> {
  const { client } = Context.current();
  const workers = await withCallDeadline(client, () => databaseWorkers(client.workflow, input.queue));
  return workers.serving ? null : { database: input.database, queue: input.queue, since: workers.lastSeen?.toISOString() ?? null };
}
