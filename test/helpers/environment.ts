/**
 * The usual test-file environment: a fresh database holding the orders fixture, an
 * in-process worker on its own task queue, and a client; set up in beforeAll and torn
 * down in afterAll. `start` starts a run of a spec the way `backfill start` does.
 */
import type { Client } from '@temporalio/client';
import { startRun, type StartRunOptions, type StartedRun } from '../../src/operations';
import { createTestDatabase, type TestDatabase } from './db';
import { createOrders, writeSpec } from './orders';
import { startTestWorker, testClient, uniqueQueue, type TestWorker } from './temporal';

export interface TestEnvironment {
  db: TestDatabase;
  worker: TestWorker;
  client: Client;
  start(spec: unknown, options?: Partial<StartRunOptions>): Promise<StartedRun>;
}

export function useTestEnvironment(label: string, options: { rows: number; worker?: boolean }): TestEnvironment {
  let closeClient: (() => Promise<void>) | undefined;
  const env = {
    start(spec: unknown, extra: Partial<StartRunOptions> = {}) {
      return startRun({ client: env.client, taskQueue: env.worker.taskQueue }, { specFile: writeSpec(spec), actor: 'test', ...extra });
    },
  } as TestEnvironment;
  beforeAll(async () => {
    env.db = await createTestDatabase(label);
    await createOrders(env.db.pool, options.rows);
    if (options.worker !== false) env.worker = await startTestWorker(uniqueQueue(label));
    ({ client: env.client, close: closeClient } = await testClient());
  });
  afterAll(async () => {
    await env.worker?.stop();
    await closeClient?.();
    await env.db?.drop();
  });
  return env;
}
