/**
 * The worker operators deploy, and the only way any path starts one: `backfill worker`,
 * `node dist/worker.js`, the Dockerfile and docker-compose, the demo and the tests. It polls
 * the common task queue (run workflows) and one queue per database it serves (partitions and
 * every activity of runs on that database: domain/ids.ts databaseTaskQueue); any number may run.
 * Needs TEMPORAL_ADDRESS and the environment variables the specs' `database` fields name,
 * listed in BACKFILL_DATABASES (module transforms: under BACKFILL_TRANSFORM_DIRS).
 * LOG_LEVEL governs our logs and the SDK's; BACKFILL_METRICS_ADDRESS opens one Prometheus
 * endpoint. SIGINT/SIGTERM drain it: running chunks commit, then partitions resume
 * elsewhere from their checkpoints.
 */
import os from 'node:os';
import { IllegalStateError } from '@temporalio/common';
import { scheduleImageRetention } from './undo/image-retention';
import { Runtime, Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from './activities';
import { PoolRegistry } from './db/pool-registry';
import { ServedQueues, type ServedQueue } from './db/served-queues';
import { createLogger } from './logger';
import { workerTrustFromEnv, type WorkerTrust } from './security/worker-trust';
import { temporalConfig, type TemporalConfig } from './temporal/config';
import { connectWorker, dataConverterFor } from './temporal/connect';
import { prebuiltBundle } from './temporal/prebuilt-bundle';
import { workersAllOrNone } from './temporal/workers-all-or-none';
import { envSettings } from './util/env-settings';
import { coreLogForwarding, sdkLoggerFor } from './sdk-logger';
import { deploymentFromSettings, deploymentOptions, type WorkerDeployment } from './temporal/worker-versioning';
import { notifyDefaultFromEnv } from './notify/worker-default';
import type { NotifyTarget } from './specs/notify-schema';

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
  /** Who runs are told of when their spec's `notify:` names no one (default: BACKFILL_NOTIFY). */
  notifyDefault?: NotifyTarget[];
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

export interface BackfillWorker {
  /** The worker on the common queue: run workflows, and runs started before routing. */
  worker: Worker;
  /** One worker per database queue this worker serves (domain/ids.ts databaseTaskQueue): partitions and every activity of their runs. */
  databaseWorkers: Worker[];
  /** Workers for the database queues found since the last call (a database that answers now, a variable set later). */
  newDatabaseWorkers(): Promise<Worker[]>;
  /** The database queues polled so far. */
  servedQueues(): ServedQueue[];
  close(): Promise<void>;
}

export async function createBackfillWorker(options: BackfillWorkerOptions = {}): Promise<BackfillWorker> {
  const config = { ...temporalConfig(), ...options.temporal };
  const logger = options.logger ?? createLogger('backfill-worker');
  const maxActivities = options.maxConcurrentActivities ?? envSettings().BACKFILL_MAX_ACTIVITIES;
  const trust = { ...workerTrustFromEnv(), ...options.trust };
  const pools = options.pools ?? new PoolRegistry({ max: maxActivities + 2, databases: trust.databases });
  const connection = options.connection ?? (await connectWorker(config));
  const deployment = options.deployment ?? deploymentFromSettings(envSettings());
  const identity = workerIdentity(process.env, deployment?.buildId);
  const notifyDefault = options.notifyDefault ?? notifyDefaultFromEnv();
  const activities = createActivities({
    pools,
    logger,
    trust,
    pausePollMs: options.pausePollMs,
    workerIdentity: identity,
    ...(deployment ? { deployment } : {}),
    ...(notifyDefault ? { notifyDefault } : {}),
  });
  const create = (taskQueue: string) =>
    Worker.create({
      connection,
      identity,
      namespace: config.namespace,
      taskQueue,
      ...workflowCode(options.workflowBundle, config.payloadKeys !== undefined),
      activities,
      // with BACKFILL_PAYLOAD_KEY: everything this worker puts into Temporal is encrypted (a prebuilt
      // workflow bundle must have been bundled with the same failureConverterPath)
      ...(config.payloadKeys ? { dataConverter: dataConverterFor(config) } : {}),
      // each activity slot may hold one database connection: this bounds the load one worker puts on each PostgreSQL;
      // a partition's first attempt is a local activity (backfill-partition.ts), bounded the same
      maxConcurrentActivityTaskExecutions: maxActivities,
      maxConcurrentLocalActivityExecutions: maxActivities,
      ...deploymentOptions(deployment),
    });
  // a database's queue carries its partition workflows and their activities (eager execution
  // keeps a partition's activity on the worker that ran its workflow task), and the run's own activities
  const served = new ServedQueues(pools, config.taskQueue, logger);
  const newDatabaseWorkers = async () => {
    const queues = await served.refresh();
    try {
      return (await workersAllOrNone(queues.map((q) => create(q.queue).then((w) => [w])))).flat();
    } catch (err) {
      // not polled, so not served: tried again once ServedQueues' wait for a failing variable is over
      served.forget(queues);
      throw err;
    }
  };
  let worker: Worker;
  let databaseWorkers: Worker[];
  try {
    // side by side: each creation loads the workflow bundle into a thread of its own
    [[worker], databaseWorkers] = await workersAllOrNone([create(config.taskQueue).then((w) => [w]), newDatabaseWorkers()]);
  } catch (err) {
    await pools.close();
    if (!options.connection) await connection.close();
    throw err;
  }
  const stopRetention = options.imageRetention === false ? () => undefined : scheduleImageRetention(trust.databases, (d) => pools.get(d), logger);
  return {
    worker,
    databaseWorkers,
    newDatabaseWorkers,
    servedQueues: () => served.all(),
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
    telemetryOptions: {
      logging: coreLogForwarding(settings.LOG_LEVEL),
      ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true } } } : {}),
    },
  });
  runtimeInstalled = true;
}

export interface RunningWorker {
  /** The common queue's worker. */
  worker: Worker;
  /** The database queues it polls so far. */
  databaseQueues(): string[];
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
 * A worker inside a program of one's own (the public API's createWorker): as startWorker, but a
 * Temporal runtime the program installed first, with its own logging and metrics, is kept.
 */
export async function createWorker(options: BackfillWorkerOptions = {}): Promise<RunningWorker> {
  try {
    installRuntime();
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
  return launchWorker(options);
}

/** How often a running worker looks for database queues to add (a database that answers now, a variable set since). */
const SERVED_REFRESH_MS = 2_000;

/**
 * Creates and runs a worker on the runtime already installed (tests: jest reuses one process
 * for many test files, and the runtime may be installed once per process). The common queue's
 * worker leads: when it stops (SIGINT/SIGTERM, stop()), every database queue's worker stops with
 * it, and a database queue's worker that fails stops them all.
 */
export async function launchWorker(options: BackfillWorkerOptions = {}): Promise<RunningWorker> {
  const logger = options.logger ?? createLogger('backfill-worker');
  const created = await createBackfillWorker({ ...options, logger });
  const { worker } = created;
  const others: Worker[] = [];
  const runs: Promise<void>[] = [];
  let stopping = false;
  let failure: unknown;
  const runDatabaseWorker = (w: Worker) => {
    others.push(w);
    runs.push(
      w.run().catch((err: unknown) => {
        failure ??= err;
        if (worker.getState() === 'RUNNING') worker.shutdown();
      }),
    );
  };
  created.databaseWorkers.forEach(runDatabaseWorker);
  let refreshing = false;
  const refresh = setInterval(() => {
    if (stopping || refreshing) return;
    refreshing = true;
    created
      .newDatabaseWorkers()
      .then((added) => added.forEach(runDatabaseWorker))
      // a database that does not answer is logged by ServedQueues; a queue whose worker could not
      // be made is said here; both are asked again at the next refresh
      .catch((err: unknown) =>
        logger.warn({ error: err instanceof Error ? err.message : String(err) }, 'could not start polling a database queue; trying again'),
      )
      .finally(() => void (refreshing = false));
  }, SERVED_REFRESH_MS);
  const done = worker.run().finally(async () => {
    stopping = true;
    clearInterval(refresh);
    while (refreshing) await new Promise((r) => setTimeout(r, 50));
    for (const w of others) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.all(runs);
    await created.close();
    if (failure) throw failure;
  });
  return {
    worker,
    databaseQueues: () => created.servedQueues().map((q) => q.queue),
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
      databaseQueues: running.databaseQueues(),
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
