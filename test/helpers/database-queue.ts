/**
 * A database's own task queue as `start` and the workers derive it (domain/ids.ts), from what the
 * database says of itself, and a wait until some worker polls it: a worker process spawned just
 * now may take longer to come up on a loaded machine than `start` waits for one.
 */
import type pg from 'pg';
import type { WorkflowClient } from '@temporalio/client';
import { databaseIdentity } from '../../src/db/identity';
import { databaseTaskQueue } from '../../src/domain/ids';
import { requireDatabaseWorker } from '../../src/operations/database-workers';

export async function databaseQueueOf(baseQueue: string, variable: string, db: pg.Pool): Promise<string> {
  return databaseTaskQueue(baseQueue, variable, (await databaseIdentity(db)).id);
}

export async function untilDatabaseServed(workflows: WorkflowClient, baseQueue: string, variable: string, db: pg.Pool, timeoutMs = 60_000): Promise<void> {
  await requireDatabaseWorker(workflows, await databaseQueueOf(baseQueue, variable, db), variable, timeoutMs);
}
