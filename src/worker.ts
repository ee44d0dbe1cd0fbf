/**
 * The worker operators deploy, and the only way any path starts one: `backfill worker`,
 * `node dist/worker.js`, the Dockerfile and docker-compose, the demo and the tests. It polls
 * the backfill task queue, runs both workflows and all activities; any number may run.
 * Needs TEMPORAL_ADDRESS and the environment variables the specs' `database` fields name,
 * listed in BACKFILL_DATABASES (module transforms: under BACKFILL_TRANSFORM_DIRS).
 * LOG_LEVEL governs our logs and the SDK's; BACKFILL_METRICS_ADDRESS opens one Prometheus
 * endpoint. SIGINT/SIGTERM drain it: running chunks commit, then partitions resume
 * elsewhere from their checkpoints.
 */
import os from 'node:os';
import { scheduleImageRetention } from './downstream/image-retention';
import { Runtime, Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from './activities';
import { PoolRegistry } from './db/pool-registry';
import { createLogger } from './logger';
import { workerTrustFromEnv, type WorkerTrust } from './security/worker-trust';
import { temporalConfig, type TemporalConfig } from './temporal/config';
import { connectWorker, dataConverterFor } from './temporal/connect';
import { prebuiltBundle } from './temporal/prebuilt-bundle';
import { envSettings } from './util/env-settings';
import { sdkLoggerFor } from './sdk-logger';
import { deploymentFromSettings, deploymentOptions, type WorkerDeployment } from './temporal/worker-versioning';

export interface BackfillWorkerOptions {
  connection?: NativeConnection;
  temporal?: Partial<TemporalConfig>;
  pools?: PoolRegistry;
  /** Databases and transform directories this worker accepts; default from BACKFILL_DATABASES and BACKFILL_TRANSFORM_DIRS. */
  trust?: Partial<WorkerTrust>;
  logger?: Logger;
  /** Pre-built workflow bundle (tests build it once per run); default dist/workflows.bundle.js when fresh. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  maxConcurrentActivities?: number;
  /** How often a partition looks at its run's control row while it waits (tests shorten it). */
  pausePollMs?: number;
  /** Worker Versioning: the deployment and build this worker serves; default from BACKFILL_BUILD_ID (off when unset). */
  deployment?: WorkerDeployment;
  /** Drop before-images past their window once a day (default on; tests sharing one process turn it off). */
  imageRetention?: boolean;
}

/** The bundle given, else the one the build wrote (tests, plain payloads), else bundle at start. */
function workflowCode(given: WorkerOptions['workflowBundle'], encrypted: boolean): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const bundle = given ?? (encrypted ? undefined : prebuiltBundle());
  return bundle ? { workflowBundle: bundle } : { workflowsPath: require.resolve('./workflows') };
}

export async function createBackfillWorker(options: BackfillWorkerOptions = {}): Promise<{ worker: Worker; close: () => Promise<void> }> {
  const config = { ...temporalConfig(), ...options.temporal };
  const logger = options.logger ?? createLogger('backfill-worker');
  const maxActivities = options.maxConcurrentActivities ?? envSettings().BACKFILL_MAX_ACTIVITIES;
  const trust = { ...workerTrustFromEnv(), ...options.trust };
  const pools = options.pools ?? new PoolRegistry({ max: maxActivities + 2, databases: trust.databases });
  const connection = options.connection ?? (await connectWorker(config));
  const deployment = options.deployment ?? deploymentFromSettings(envSettings());
  const identity = workerIdentity(process.env, deployment?.buildId);
  const worker = await Worker.create({
    connection,
    identity,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    ...workflowCode(options.workflowBundle, config.payloadKeys !== undefined),
    activities: createActivities({ pools, logger, trust, pausePollMs: options.pausePollMs, workerIdentity: identity }),
    // with BACKFILL_PAYLOAD_KEY: everything this worker puts into Temporal is encrypted (a prebuilt
    // workflow bundle must have been bundled with the same failureConverterPath)
    ...(config.payloadKeys ? { dataConverter: dataConverterFor(config) } : {}),
    // each activity slot may hold one database connection: this bounds the load one worker puts on PostgreSQL
    maxConcurrentActivityTaskExecutions: maxActivities,
    ...deploymentOptions(deployment),
  });
  const stopRetention = options.imageRetention === false ? () => undefined : scheduleImageRetention(trust.databases, (d) => pools.get(d), logger);
  return {
    worker,
    close: async () => {
      stopRetention();
      await pools.close();
      if (!options.connection) await connection.close();
    },
  };
}

/**
 * Temporal's default worker identity (pid@host), or BACKFILL_WORKER_IDENTITY: the name the chunk
 * log and the Web UI show; a versioned worker adds its build (`pid@host#build`), so the chunk log
 * says which build wrote each chunk.
 */
export function workerIdentity(env: NodeJS.ProcessEnv = process.env, buildId?: string): string {
  const base = env.BACKFILL_WORKER_IDENTITY || `${process.pid}@${os.hostname()}`;
  return buildId ? `${base}#${buildId}` : base;
}

let runtimeInstalled = false;

/**
 * Installs the process-wide Temporal runtime, once: the SDK's own logs follow LOG_LEVEL like
 * ours, and with BACKFILL_METRICS_ADDRESS (e.g. 0.0.0.0:9464) one Prometheus endpoint serves
 * the SDK's worker metrics and the backfill's own (rows, chunks, chunk duration, paused).
 */
export function installRuntime(env: NodeJS.ProcessEnv = process.env): void {
  if (runtimeInstalled) return;
  const settings = envSettings(env);
  const metricsAddress = settings.BACKFILL_METRICS_ADDRESS;
  Runtime.install({
    logger: sdkLoggerFor(createLogger('temporal-sdk', settings.LOG_LEVEL)),
    ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true } } } } : {}),
  });
  runtimeInstalled = true;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped polling and drained. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts a worker in this process, with the runtime (logs, metrics) installed as `backfill worker` does. */
export async function startWorker(options: BackfillWorkerOptions = {}): Promise<RunningWorker> {
  installRuntime();
  return launchWorker(options);
}

/**
 * Creates and runs a worker on the runtime already installed (tests: jest reuses one process
 * for many test files, and the runtime may be installed once per process).
 */
export async function launchWorker(options: BackfillWorkerOptions = {}): Promise<RunningWorker> {
  const { worker, close } = await createBackfillWorker(options);
  const done = worker.run().finally(close);
  return {
    worker,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

/** `backfill worker` and `node dist/worker.js`: run until SIGINT/SIGTERM (the SDK drains on them). */
export async function runWorker(): Promise<void> {
  const config = temporalConfig();
  const logger = createLogger('backfill-worker');
  const running = await startWorker({ logger });
  logger.info(
    {
      address: config.address,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      tls: Boolean(config.connection?.tls),
      apiKey: Boolean(config.connection?.apiKey),
      payloadEncryption: Boolean(config.payloadKeys),
      metrics: process.env.BACKFILL_METRICS_ADDRESS ?? null,
    },
    'worker started',
  );
  await running.done;
}

if (require.main === module) {
  runWorker().catch((err) => {
    process.stderr.write(`backfill worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
