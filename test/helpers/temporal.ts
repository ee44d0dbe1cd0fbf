/**
 * An in-process worker and a client against the test dev server. The workflow bundle is
 * built once per test file (bundling takes seconds).
 */
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap, type Worker } from '@temporalio/worker';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { WorkerTrust } from '../../src/security/worker-trust';
import type { TemporalConfig } from '../../src/temporal/config';
import type { WorkerDeployment } from '../../src/temporal/worker-versioning';
import { connectClient } from '../../src/temporal/connect';
import { launchWorker } from '../../src/worker';
import { uniqueName } from './unique';

/** The allow-list entry for every test file's database variable (see helpers/db.ts). */
export const TEST_DATABASES = 'BF_TEST_DB_*';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  return bundle;
}

/** The bundle a worker with payload encryption needs: failures are encoded inside the sandbox too. */
export function encryptedWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    failureConverterPath: require.resolve('../../src/temporal/failure-converter'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
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
    // one jest process serves many test files: no timers outliving them
    imageRetention: false,
  });
  return { worker: running.worker, taskQueue, stop: running.stop };
}

export function uniqueQueue(label: string): string {
  return uniqueName(`test-${label}`, '-');
}
