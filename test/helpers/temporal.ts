/**
 * An in-process worker and a client against the test dev server. The workflow bundles come
 * from test/helpers/workflow-bundles.ts (built once per test run).
 */
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap, Worker } from '@temporalio/worker';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { WorkerTrust } from '../../src/security/worker-trust';
import type { NotifyTarget } from '../../src/specs/notify-schema';
import type { TemporalConfig } from '../../src/temporal/config';
import type { WorkerDeployment } from '../../src/temporal/worker-versioning';
import { connectClient } from '../../src/temporal/connect';
import { launchWorker } from '../../src/worker';
import { uniqueName } from './unique';
import { workflowBundleOf } from './workflow-bundles';

/** The allow-list entry for every test file's database variable (see helpers/db.ts). */
export const TEST_DATABASES = 'BF_TEST_DB_*';

export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return workflowBundleOf('plain');
}

/** The bundle a worker with payload encryption needs: failures are encoded inside the sandbox too. */
export function encryptedWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return workflowBundleOf('encrypted');
}

export function temporalAddress(): string {
  const address = process.env.BACKFILL_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('BACKFILL_TEST_TEMPORAL_ADDRESS is not set: run the tests through jest (globalSetup starts Temporal)');
  return address;
}

export async function testClient(): Promise<{ client: Client; close: () => Promise<void> }> {
  return connectClient({ address: temporalAddress(), namespace: 'default' });
}

export interface TestWorker {
  worker: Worker;
  taskQueue: string;
  stop(): Promise<void>;
}

/** An in-process worker built exactly as `backfill worker` builds one, on its own task queue. */
export interface TestWorkerOptions {
  maxConcurrentActivities?: number;
  trust?: Partial<WorkerTrust>;
  /** Connection settings beyond the test server's address (payload keys). */
  temporal?: Partial<TemporalConfig>;
  bundle?: WorkflowBundleWithSourceMap;
  /** Worker Versioning: the deployment and build this worker serves. */
  deployment?: WorkerDeployment;
  /** As BACKFILL_NOTIFY: who runs are told of when their spec names no one. */
  notifyDefault?: NotifyTarget[];
}

export async function startTestWorker(taskQueue: string, options: TestWorkerOptions = {}): Promise<TestWorker> {
  const maxConcurrentActivities = options.maxConcurrentActivities ?? 20;
  const running = await launchWorker({
    temporal: { address: temporalAddress(), namespace: 'default', taskQueue, ...options.temporal },
    workflowBundle: options.bundle ?? (await workflowBundle()),
    // test databases are BF_TEST_DB_<file>; test transform modules are written to the temp directory
    trust: { databases: [TEST_DATABASES], transformDirs: [os.tmpdir(), path.resolve(__dirname, '../..')], ...options.trust },
    logger: pino({ level: 'warn' }),
    maxConcurrentActivities,
    pausePollMs: 200,
    deployment: options.deployment,
    ...(options.notifyDefault ? { notifyDefault: options.notifyDefault } : {}),
    // one jest process serves many test files: no timers outliving them
    imageRetention: false,
  });
  return { worker: running.worker, taskQueue, stop: running.stop };
}

export function uniqueQueue(label: string): string {
  return uniqueName(`test-${label}`, '-');
}
