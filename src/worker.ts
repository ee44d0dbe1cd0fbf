/**
 * The worker operators deploy: polls the backfill task queue, runs both workflows and
 * all activities. Any number may run; throughput grows with workers up to the spec's
 * limits. Needs TEMPORAL_ADDRESS and the environment variables the specs' `database`
 * fields name. SIGINT/SIGTERM drain it: running chunks commit, then partitions resume
 * elsewhere from their checkpoints.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from './activities';
import { temporalConfig, type TemporalConfig } from './config';
import { PoolRegistry } from './db/pool-registry';
import { createLogger } from './logger';

export interface BackfillWorkerOptions {
  connection?: NativeConnection;
  temporal?: Partial<TemporalConfig>;
  pools?: PoolRegistry;
  logger?: Logger;
  /** Pre-built workflow bundle (tests build it once per file). */
  workflowBundle?: WorkerOptions['workflowBundle'];
  maxConcurrentActivities?: number;
}

export async function createBackfillWorker(options: BackfillWorkerOptions = {}): Promise<{ worker: Worker; close: () => Promise<void> }> {
  const config = { ...temporalConfig(), ...options.temporal };
  const logger = options.logger ?? createLogger('backfill-worker');
  const maxActivities = options.maxConcurrentActivities ?? Number(process.env.BACKFILL_MAX_ACTIVITIES || 20);
  const pools = options.pools ?? new PoolRegistry({ max: maxActivities + 2 });
  const connection = options.connection ?? (await NativeConnection.connect({ address: config.address }));
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('./workflows') }),
    activities: createActivities({ pools, logger }),
    // each activity slot may hold one database connection: this bounds the load one worker puts on PostgreSQL
    maxConcurrentActivityTaskExecutions: maxActivities,
  });
  return {
    worker,
    close: async () => {
      await pools.close();
      if (!options.connection) await connection.close();
    },
  };
}

/**
 * Installs the process-wide Temporal runtime, once: the SDK's own logs follow LOG_LEVEL like
 * ours, and with BACKFILL_METRICS_ADDRESS (e.g. 0.0.0.0:9464) one Prometheus endpoint serves
 * the SDK's worker metrics and the backfill's own (rows, chunks, chunk duration, paused).
 */
export function installRuntimeLogger(level = process.env.LOG_LEVEL || 'info', metricsAddress = process.env.BACKFILL_METRICS_ADDRESS): void {
  const levels: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };
  Runtime.install({
    logger: new DefaultLogger(levels[level] ?? 'INFO'),
    ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true } } } } : {}),
  });
}

async function main(): Promise<void> {
  installRuntimeLogger();
  const config = temporalConfig();
  const logger = createLogger('backfill-worker');
  const { worker, close } = await createBackfillWorker({ logger });
  logger.info(
    { address: config.address, namespace: config.namespace, taskQueue: config.taskQueue, metrics: process.env.BACKFILL_METRICS_ADDRESS ?? null },
    'worker started',
  );
  try {
    await worker.run();
  } finally {
    await close();
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`backfill worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
