/**
 * A production Temporal deployment for a test file: fresh databases set up by the compose script,
 * the server (one process, or one per service), an admin-made namespace, an in-process worker; and
 * what the production tier asks of a run (started slow enough to be hit mid-way, followed in the
 * ledger while the server may be down, audited as in the chaos matrix).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { ledgerCheck } from '../chaos/fault-matrix';
import { bringUpProductionTemporal, type ProductionServer } from '../../src/dev/temporal-production';
import { cachedServerBinaries } from '../../src/dev/temporal-server-build';
import { findTemporalCli } from '../../src/dev/temporal-cli';
import { startRun } from '../../src/operations';
import { connectClient } from '../../src/temporal/connect';
import { pollUntil } from '../../src/util/poll-until';
import { untilDatabaseServed } from './database-queue';
import type { TestDatabase } from './db';
import { diffAgainstExpected, ordersSpec, writeSpec } from './orders';
import { startTestWorker, TEST_DATABASES, uniqueQueue, type TestWorker } from './temporal';
import { uniqueName } from './unique';

const execFileAsync = promisify(execFile);

/** A machine without Go cannot build the server: the global setup said why (on CI it fails instead). */
export const describeWithServer = process.env.BACKFILL_TEST_NO_TEMPORAL_SERVER ? describe.skip : describe;

export interface Deployment {
  server: ProductionServer;
  client: Client;
  worker: TestWorker;
  taskQueue: string;
  down(): Promise<void>;
}

export async function bringUp(split: boolean): Promise<Deployment> {
  if (!cachedServerBinaries()) throw new Error('the Temporal server is not built: the global setup builds it (backfill setup --temporal-server)');
  const databases = { main: uniqueName('temporal'), visibility: uniqueName('temporal_visibility') };
  const root = mkdtempSync(path.join(os.tmpdir(), 'backfill-temporal-'));
  const server = await bringUpProductionTemporal({ pgUrl: process.env.BACKFILL_TEST_PG_URL!, databases, root, split });
  const { client, close } = await connectClient({ address: server.address, namespace: 'default' });
  const taskQueue = uniqueQueue('prodserver');
  const worker = await startTestWorker(taskQueue, { temporal: { address: server.address, namespace: 'default' } });
  return {
    server,
    client,
    worker,
    taskQueue,
    async down() {
      await worker.stop();
      await close();
      await server.stop();
      const admin = new pg.Client({ connectionString: process.env.BACKFILL_TEST_PG_URL });
      await admin.connect();
      for (const db of Object.values(databases)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** The target against the one-statement reference, and the ledger's invariants. */
export const audit = async (db: TestDatabase, runId: string) => ({
  target: await diffAgainstExpected(db.pool),
  ledger: await ledgerCheck(db.pool, runId, 'app.orders_usd'),
});

export const EXACT = { target: expect.objectContaining({ missing: 0, extra: 0 }), ledger: [] };

/** The orders spec paced to 4,000 rows/s in partitions of 4,000: slow enough to be hit mid-way. */
export function slowOrdersSpec(db: TestDatabase, name: string) {
  return ordersSpec(db.envVar, {
    name,
    partition: { by: 'range', column: 'id', size: 4_000 },
    limits: { chunkSize: 500, concurrency: 4, rowsPerSecond: 4_000 },
  });
}

export async function startSlowRun(db: TestDatabase, client: Client, taskQueue: string, name: string) {
  await db.pool.query('TRUNCATE app.orders_usd');
  return startRun({ client, taskQueue }, { specFile: writeSpec(slowOrdersSpec(db, name)), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });
}

export async function untilRowsRead(db: TestDatabase, runId: string, rows: number): Promise<void> {
  const reached = await pollUntil(
    async () => {
      const { rows: r } = await db.pool.query('SELECT coalesce(sum(rows_read), 0)::int AS n FROM backfill.partitions WHERE run_id = $1', [runId]);
      return r[0].n >= rows ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  if (!reached) throw new Error(`run ${runId} did not read ${rows} rows within 60 s`);
}

/** The ledger says when it is over; the client's long poll may give up while the server is down. */
export async function finalStatus(db: TestDatabase, runId: string): Promise<string | undefined> {
  return pollUntil(
    async () => {
      const { rows } = await db.pool.query("SELECT status FROM backfill.runs WHERE run_id = $1 AND status IN ('succeeded', 'failed', 'cancelled')", [runId]);
      return rows[0]?.status as string | undefined;
    },
    { timeoutMs: 180_000, intervalMs: 250 },
  );
}

/** The deployment's current build, as an operator sets it (retried until the build's workers have polled). */
export async function setCurrentVersion(address: string, deploymentName: string, buildId: string): Promise<void> {
  let last: unknown;
  const done = await pollUntil(
    () =>
      execFileAsync(findTemporalCli()!, [
        'worker',
        'deployment',
        'set-current-version',
        '--address',
        address,
        '--deployment-name',
        deploymentName,
        '--build-id',
        buildId,
        '--yes',
      ])
        .then(() => true)
        .catch((err: unknown) => {
          last = err;
          return undefined;
        }),
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  if (!done) throw new Error(`could not make ${deploymentName}:${buildId} current: ${String((last as { stderr?: string })?.stderr ?? last)}`);
}

/** The worker as deployed (dist/worker.js, or another build's), reaching the test database as the least-privilege role and refusing anything more. */
export function spawnWorkerProcess(options: {
  entry?: string;
  address: string;
  taskQueue: string;
  db: TestDatabase;
  runnerUrl: string;
  identity?: string;
}): ChildProcess {
  return spawn(process.execPath, [options.entry ?? path.join(__dirname, '..', '..', 'dist', 'worker.js')], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: options.address,
      BACKFILL_TASK_QUEUE: options.taskQueue,
      BACKFILL_DATABASES: TEST_DATABASES,
      [options.db.envVar]: options.runnerUrl,
      BACKFILL_REQUIRE_LEAST_PRIVILEGE: '1',
      ...(options.identity ? { BACKFILL_WORKER_IDENTITY: options.identity } : {}),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Waits until a worker polls the test database's own queue under `taskQueue`. */
export async function untilServed(client: Client, taskQueue: string, db: TestDatabase): Promise<void> {
  await untilDatabaseServed(client.workflow, taskQueue, db.envVar, db.pool);
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
