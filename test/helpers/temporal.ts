/**
 * An in-process worker and a client against the test dev server. The workflow bundle is
 * built once per test file (bundling takes seconds).
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundleWithSourceMap, type Worker } from '@temporalio/worker';
import pino from 'pino';
import { createActivities } from '../../src/activities';
import { PoolRegistry } from '../../src/db/pool-registry';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  return bundle;
}

export function temporalAddress(): string {
  const address = process.env.BACKFILL_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('BACKFILL_TEST_TEMPORAL_ADDRESS is not set: run the tests through jest (globalSetup starts Temporal)');
  return address;
}

export async function testClient(): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: temporalAddress() });
  return { client: new Client({ connection, namespace: 'default' }), close: () => connection.close() };
}

export interface TestWorker {
  worker: Worker;
  taskQueue: string;
  stop(): Promise<void>;
}

export async function startTestWorker(taskQueue: string, options: { maxConcurrentActivities?: number } = {}): Promise<TestWorker> {
  const { Worker } = await import('@temporalio/worker');
  const connection = await NativeConnection.connect({ address: temporalAddress() });
  const pools = new PoolRegistry({ max: (options.maxConcurrentActivities ?? 20) + 2 });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ pools, logger: pino({ level: 'warn' }), pausePollMs: 200 }),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 20,
  });
  const running = worker.run();
  return {
    worker,
    taskQueue,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await pools.close();
      await connection.close();
    },
  };
}

export function uniqueQueue(label: string): string {
  return `test-${label}-${Math.random().toString(36).slice(2, 8)}`;
}
