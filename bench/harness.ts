/**
 * What every benchmark needs, in one invocation: PostgreSQL (DATABASE_URL, else the
 * embedded one) with the bench database and dataset, a headless Temporal dev server,
 * workers, and a way to run a spec to completion, timed.
 *
 * Workers: one in this process by default; BENCH_WORKERS=N starts N worker processes instead
 * (`node dist/worker.js`, as operators deploy them; `npm run build` first), each running at
 * most BENCH_WORKER_ACTIVITIES activities, so a run's partitions spread over processes — a
 * TypeScript transform runs on one Node thread per worker process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { stringify } from 'yaml';
import { startRun, waitForResult, type StartRunOptions } from '../src/operations';
import type { RunResult } from '../src/workflows/backfill-run';
import { createPool } from '../src/db/pool';
import { ensureDatabase, startPostgres } from '../src/dev/postgres';
import { DEV_SERVER_SPEED, TASK_HANDOFF_SPEED } from '../src/dev/services';
import { ensureTemporalCli } from '../src/dev/temporal-cli';
import { freePort, startDevServer } from '../src/dev/temporal-server';
import { bringUpProductionTemporal } from '../src/dev/temporal-production';
import { connectClient } from '../src/temporal/connect';
import { startWorker } from '../src/worker';
import { createDataset, ROWS } from './dataset';

export const say = (line: string) => process.stderr.write(`${line}\n`);

export interface BenchEnvironment {
  pool: pg.Pool;
  url: string;
  version: string;
  /** The dev server's address, and a client of it. */
  address: string;
  client: Client;
  /** Runs a spec (an object; database and name filled in) to completion; throws unless it succeeded. */
  backfill(
    name: string,
    spec: Record<string, unknown>,
    options?: Pick<StartRunOptions, 'partitionsAlone'>,
  ): Promise<RunResult & { workflowId: string; firstRunId: string }>;
  /** The worker processes' pids (BENCH_WORKERS); none when the worker runs in this process. */
  workerPids: number[];
  /**
   * One small run of each spec (its first WARM_UP_ROWS keys, in partitions for every slot), so
   * that each worker process has run a workflow and the activities before anything is timed, as
   * a long-lived deployment has: the first run a worker takes creates its workflow context,
   * connects its pools and compiles its code paths (0.5-0.8 s here).
   */
  warmUp(specs: Record<string, unknown>[]): Promise<void>;
  stop(): Promise<void>;
}

export interface BenchOptions {
  /** Create the 2M-row bench.orders dataset (default true). */
  dataset?: boolean;
  /** Start the dev server as `dev` and `demo` do (file-backed SQLite with their pragmas) instead of in memory. */
  asDemo?: boolean;
  /** Activity slots of the in-process worker (default 4; the demo's worker has 20). */
  workerActivities?: number;
  /** Start no workers: the benchmark starts its own (startWorkerProcesses). */
  noWorkers?: boolean;
  /**
   * `production`: Temporal's own server on PostgreSQL persistence and SQL visibility (the
   * version compose deploys, on fresh databases beside the bench's) instead of the dev server.
   */
  server?: 'dev' | 'production';
  /** Settings of the embedded PostgreSQL (`-c name=value`), e.g. more connections for a fleet's many databases. */
  postgresSettings?: Record<string, string>;
}

export async function startBenchEnvironment(options: BenchOptions = {}): Promise<BenchEnvironment> {
  // a benchmark connects as the superuser of its own PostgreSQL on purpose: the workers' warning
  // about it (and every other warning) would interleave JSON with the tables; errors still show
  process.env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'error';
  const postgres = await startPostgres({
    dataDir: path.join(process.env.BACKFILL_DATA_DIR || path.join(__dirname, '..', '.data'), 'postgres'),
    port: 54329,
    say,
    ...(options.postgresSettings ? { settings: options.postgresSettings } : {}),
  });
  const url = await ensureDatabase(postgres.url, 'backfill_bench');
  process.env.BENCH_DATABASE_URL = url;
  const pool = createPool(url, { max: 4 });
  if (options.dataset ?? true) await createDataset(pool);
  const server = options.server === 'production' ? await productionServer(postgres.url) : await devServer(options.asDemo);
  const { client, close: closeClient } = await connectClient({ address: server.address, namespace: 'default' });
  const workers: { stop(): Promise<void>; children?: ChildProcess[] } = options.noWorkers
    ? { stop: async () => undefined }
    : await startWorkers(server.address, url, options.workerActivities ?? 4);
  // a process still loading its workflow bundle would leave the first run to the others
  if (workers.children) await untilPolling(client, workers.children.length);
  const specDir = mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-'));
  const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
  say(`PostgreSQL ${version}, ${ROWS} rows, ${os.cpus().length} cores`);
  const backfill: BenchEnvironment['backfill'] = async (name, spec, options = {}) => {
    const file = path.join(specDir, `${name}.yaml`);
    writeFileSync(file, stringify({ name, reason: 'benchmark', database: 'BENCH_DATABASE_URL', ...spec }));
    const started = await startRun({ client, taskQueue: 'bench' }, { specFile: file, actor: 'bench', ...options });
    const result = await waitForResult(started.handle);
    if (result.status !== 'succeeded') throw new Error(`bench run ${started.runId} ended ${result.status}`);
    return { ...result, workflowId: started.handle.workflowId, firstRunId: started.handle.firstExecutionRunId };
  };
  return {
    pool,
    url,
    version,
    address: server.address,
    client,
    workerPids: (workers.children ?? []).map((c) => c.pid!),
    async warmUp(specs) {
      for (const [i, spec] of specs.entries()) {
        const limits = spec.limits as Record<string, unknown>;
        await backfill(`warm-up-${Date.now()}-${i}`, {
          ...spec,
          source: { ...(spec.source as object), where: `id < ${WARM_UP_ROWS}` },
          partition: { by: 'range', column: 'id', size: WARM_UP_ROWS / 4 },
          limits: { ...limits, chunkSize: WARM_UP_ROWS / 16 },
        });
      }
    },
    backfill,
    async stop() {
      await workers.stop();
      await closeClient();
      await pool.end();
      await server.stop();
      await postgres.stop();
    },
  };
}

async function devServer(asDemo: boolean | undefined): Promise<{ address: string; stop(): Promise<void> }> {
  const dbFile = asDemo ? path.join(mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-temporal-')), 'temporal.db') : undefined;
  return startDevServer({
    cliPath: await ensureTemporalCli(say),
    port: await freePort(),
    uiPort: null,
    // the task hand-offs every server this project starts or deploys has (src/dev/services.ts);
    // the SQLite settings only where there is a file
    ...(dbFile ? { dbFile, extraArgs: DEV_SERVER_SPEED } : { extraArgs: TASK_HANDOFF_SPEED }),
  });
}

/** The production server on fresh databases (dropped first: every measurement starts from an empty history). */
async function productionServer(serverUrl: string): Promise<{ address: string; stop(): Promise<void> }> {
  const databases = { main: 'temporal_bench', visibility: 'temporal_bench_visibility' };
  const admin = createPool(serverUrl, { max: 1 });
  for (const db of Object.values(databases)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
  say('Temporal: the production server on PostgreSQL persistence and SQL visibility');
  return bringUpProductionTemporal({ pgUrl: serverUrl, databases, root: mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-temporal-')), say });
}

const WORKER_PROCESSES = Number(process.env.BENCH_WORKERS || 0);
const WARM_UP_ROWS = 40_000;

async function startWorkers(address: string, url: string, activities: number): Promise<{ stop(): Promise<void>; children?: ChildProcess[] }> {
  if (WORKER_PROCESSES < 1) {
    return startWorker({ temporal: { address, taskQueue: 'bench' }, maxConcurrentActivities: activities, trust: { databases: ['BENCH_DATABASE_URL'] } });
  }
  const started = startWorkerProcesses(address, url, WORKER_PROCESSES, Number(process.env.BENCH_WORKER_ACTIVITIES || 2));
  say(`${WORKER_PROCESSES} worker processes (dist/worker.js)`);
  return started;
}

/** Waits until `count` bench worker processes poll the bench task queue for activities. */
export async function untilPolling(client: Client, count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const described = await client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: 'bench' }, taskQueueType: 2 /* activity */ });
    const identities = new Set(described.pollers.map((p) => p.identity).filter((i) => i?.startsWith('bench-worker-')));
    if (identities.size >= count) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${count} bench workers did not poll within 2 minutes`);
}

export interface WorkerProcesses {
  children: ChildProcess[];
  stop(): Promise<void>;
}

/** `count` worker processes as operators deploy them (dist/worker.js), named bench-worker-1…N in the chunk log. */
export function startWorkerProcesses(address: string, url: string, count: number, activities: number, databases = 'BENCH_DATABASE_URL'): WorkerProcesses {
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    // BENCH_WORKER_NODE_ARGS: Node options a worker process starts with (e.g. --cpu-prof, which NODE_OPTIONS refuses)
    const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...nodeArgs, path.join(__dirname, '..', 'dist', 'worker.js')], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        BACKFILL_TASK_QUEUE: 'bench',
        BENCH_DATABASE_URL: url,
        BACKFILL_DATABASES: databases,
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error',
        BACKFILL_MAX_ACTIVITIES: String(activities),
        BACKFILL_WORKER_IDENTITY: `bench-worker-${i + 1}`,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
  }
  return {
    children,
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
