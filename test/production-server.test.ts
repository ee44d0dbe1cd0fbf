/**
 * The deployment the README recommends, not the dev server: Temporal's own server on PostgreSQL
 * persistence with SQL visibility (the version docker-compose.yml pins, built by the global
 * setup), its databases set up by deploy/temporal-schema.sh and its dynamic config read from
 * deploy/dynamicconfig — the script and file compose uses. The namespace is made by an admin step
 * and holds no search attribute. On it: the first `backfill start` succeeds and runs exact; a run
 * survives the whole server SIGKILLed and started again, and a worker process SIGKILLed; and on the server run as four services
 * (frontend, history, matching, worker in their own processes), a run survives its history
 * service and then its frontend SIGKILLed and started again. Each run is exact against the
 * one-statement reference, with the ledger audited as in the chaos matrix. Worker Versioning:
 * build B made current while a run is mid-way; the run, pinned, finishes on build A through its
 * continue-as-new generations, and the next run goes to B.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { ledgerCheck } from '../bench/chaos';
import { bringUpProductionTemporal, type ProductionServer } from '../src/dev/temporal-production';
import { cachedServerBinaries } from '../src/dev/temporal-server-build';
import { findTemporalCli } from '../src/dev/temporal-cli';
import { connectClient } from '../src/temporal/connect';
import { startRun, statusReport, waitForResult } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { startTestWorker, TEST_DATABASES, uniqueQueue, type TestWorker } from './helpers/temporal';
import { uniqueName } from './helpers/unique';
import { pollUntil } from '../src/util/poll-until';

// a machine without Go cannot build the server: the global setup said why (on CI it fails instead)
const execFileAsync = promisify(execFile);
const missing = process.env.BACKFILL_TEST_NO_TEMPORAL_SERVER;
const describeWithServer = missing ? describe.skip : describe;

const env = useTestEnvironment('prodserver', { rows: 40_000, worker: false });

interface Deployment {
  server: ProductionServer;
  client: Client;
  worker: TestWorker;
  taskQueue: string;
  down(): Promise<void>;
}

/** Fresh databases set up by the compose script, the server (one process, or one per service), an admin-made namespace, a worker. */
async function bringUp(split: boolean): Promise<Deployment> {
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

const audit = async (runId: string) => ({
  target: await diffAgainstExpected(env.db.pool),
  ledger: await ledgerCheck(env.db.pool, runId, 'app.orders_usd'),
});

/** A run of the orders spec slow enough (4,000 rows/s) to be hit mid-way, started on the deployment. */
async function startSlowRun(d: Deployment, name: string) {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = ordersSpec(env.db.envVar, {
    name,
    partition: { by: 'range', column: 'id', size: 4_000 },
    limits: { chunkSize: 500, concurrency: 4, rowsPerSecond: 4_000 },
  });
  return startRun({ client: d.client, taskQueue: d.taskQueue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });
}

async function untilRowsRead(runId: string, rows: number): Promise<void> {
  const reached = await pollUntil(
    async () => {
      const { rows: r } = await env.db.pool.query('SELECT coalesce(sum(rows_read), 0)::int AS n FROM backfill.partitions WHERE run_id = $1', [runId]);
      return r[0].n >= rows ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  if (!reached) throw new Error(`run ${runId} did not read ${rows} rows within 60 s`);
}

/** The ledger says when it is over; the client's long poll may give up while the server is down. */
async function finalStatus(runId: string): Promise<string | undefined> {
  return pollUntil(
    async () => {
      const { rows } = await env.db.pool.query("SELECT status FROM backfill.runs WHERE run_id = $1 AND status IN ('succeeded', 'failed', 'cancelled')", [
        runId,
      ]);
      return rows[0]?.status as string | undefined;
    },
    { timeoutMs: 180_000, intervalMs: 250 },
  );
}

/** The deployment's current build, as an operator sets it (retried until the build's workers have polled). */
async function setCurrentVersion(address: string, deploymentName: string, buildId: string): Promise<void> {
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

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithServer('on the production Temporal server as one process', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await bringUp(false);
  }, 240_000);
  afterAll(() => d?.down());

  test('the first start on the admin-made namespace registers the search attributes and runs exact', async () => {
    const listed = await d.client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(listed.customAttributes ?? {})).toEqual([]);
    const started = await runCli(['start', writeSpec(ordersSpec(env.db.envVar, { name: 'prod-first' })), '--wait'], {
      TEMPORAL_ADDRESS: d.server.address,
      BACKFILL_TASK_QUEUE: d.taskQueue,
    });
    expect(started.stderr).not.toMatch(/Failed to start Workflow/);
    expect(started.code).toBe(0);
    const { rows } = await env.db.pool.query("SELECT run_id FROM backfill.runs WHERE name = 'prod-first'");
    expect(await audit(rows[0].run_id)).toEqual({ target: expect.objectContaining({ missing: 0, extra: 0 }), ledger: [] });
  });

  test('a run survives the whole server SIGKILLed and started again, exact, the ledger consistent', async () => {
    const run = await startSlowRun(d, 'prod-restart');
    await untilRowsRead(run.runId, 8_000);
    await d.server.kill();
    await pause(3000);
    await d.server.start();
    expect(await finalStatus(run.runId)).toBe('succeeded');
    expect((await waitForResult(run.handle)).status).toBe('succeeded');
    expect(await audit(run.runId)).toEqual({ target: expect.objectContaining({ missing: 0, extra: 0 }), ledger: [] });
  });
  test('a run survives a worker process SIGKILLed mid-partition (as deployed: dist/worker.js), exact, the ledger consistent', async () => {
    const queue = uniqueQueue('prodkill');
    const spawnWorker = () =>
      spawn(process.execPath, [path.join(__dirname, '..', 'dist', 'worker.js')], {
        env: { ...process.env, TEMPORAL_ADDRESS: d.server.address, BACKFILL_TASK_QUEUE: queue, BACKFILL_DATABASES: TEST_DATABASES, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    const processes = [spawnWorker(), spawnWorker()];
    try {
      await env.db.pool.query('TRUNCATE app.orders_usd');
      const spec = ordersSpec(env.db.envVar, {
        name: 'prod-worker-kill',
        partition: { by: 'range', column: 'id', size: 4_000 },
        limits: { chunkSize: 500, concurrency: 4, rowsPerSecond: 4_000 },
      });
      const run = await startRun({ client: d.client, taskQueue: queue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });
      await untilRowsRead(run.runId, 8_000);
      const killed = new Promise((resolve) => processes[0].once('exit', resolve));
      processes[0].kill('SIGKILL');
      await killed;
      processes.push(spawnWorker());
      expect(await finalStatus(run.runId)).toBe('succeeded');
      expect(await audit(run.runId)).toEqual({ target: expect.objectContaining({ missing: 0, extra: 0 }), ledger: [] });
    } finally {
      for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
  });

  test('Worker Versioning: a run pinned to build A finishes on A, through its continue-as-new generations, while the next run goes to B; Temporal and the chunk log say which build ran what', async () => {
    const queue = uniqueQueue('versioned');
    const deploymentName = uniqueName('bf-deploy', '-');
    const connection = { address: d.server.address, namespace: 'default' };
    const build = (buildId: string) => startTestWorker(queue, { temporal: connection, deployment: { name: deploymentName, buildId, behavior: 'PINNED' } });
    const workers = [await build('a')];
    try {
      await setCurrentVersion(d.server.address, deploymentName, 'a');
      await env.db.pool.query(
        'TRUNCATE app.orders_usd; DROP TABLE IF EXISTS app.orders_usd_b; CREATE TABLE app.orders_usd_b (LIKE app.orders_usd INCLUDING ALL)',
      );
      const slow = { partition: { by: 'range' as const, column: 'id', size: 4_000 }, limits: { chunkSize: 500, concurrency: 4, rowsPerSecond: 4_000 } };
      const first = await startRun(
        { client: d.client, taskQueue: queue },
        // a short history bound: the run continues as new several times while B is current
        { specFile: writeSpec(ordersSpec(env.db.envVar, { name: 'pinned-a', ...slow })), actor: 'test', maxHistoryEvents: 60 },
      );
      await untilRowsRead(first.runId, 4_000);
      // build B arrives and becomes current while the first run is mid-way
      workers.push(await build('b'));
      await setCurrentVersion(d.server.address, deploymentName, 'b');
      const second = await startRun(
        { client: d.client, taskQueue: queue },
        {
          specFile: writeSpec(ordersSpec(env.db.envVar, { name: 'pinned-b', ...slow, target: { table: 'app.orders_usd_b', key: ['id'], mode: 'upsert' } })),
          actor: 'test',
        },
      );
      expect(await finalStatus(first.runId)).toBe('succeeded');
      expect(await finalStatus(second.runId)).toBe('succeeded');

      const version = async (handle: typeof first.handle) => (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
      expect(await version(first.handle)).toMatchObject({ behavior: 1, deploymentVersion: { deploymentName, buildId: 'a' } }); // PINNED
      // visibility is written behind the history: ask until the generations show
      const generations = await pollUntil(
        async () => {
          const listed = await d.client.workflowService.listWorkflowExecutions({ namespace: 'default', query: `WorkflowId = '${first.workflowId}'` });
          return listed.executions.length > 1 ? listed.executions.length : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 250 },
      );
      expect(generations).toBeGreaterThan(1);
      expect(await version(second.handle)).toMatchObject({ behavior: 1, deploymentVersion: { deploymentName, buildId: 'b' } });
      const builds = async (runId: string) =>
        (await env.db.pool.query("SELECT DISTINCT split_part(worker, '#', 2) AS build FROM backfill.chunks WHERE run_id = $1 ORDER BY 1", [runId])).rows.map(
          (r) => r.build,
        );
      expect(await builds(first.runId)).toEqual(['a']);
      expect(await builds(second.runId)).toEqual(['b']);
      // `backfill status` lists the workers that wrote a run's chunks, each named with its build
      const writers = (await statusReport(env.db.pool, (await getRun(env.db.pool, first.runId))!)).workers;
      expect(writers.length).toBeGreaterThan(0);
      expect(writers.every((w) => w.worker.endsWith('#a'))).toBe(true);
      expect(await audit(first.runId)).toEqual({ target: expect.objectContaining({ missing: 0, extra: 0 }), ledger: [] });
      const { rows } = await env.db.pool.query(
        'SELECT (SELECT count(*) FROM (TABLE app.orders_usd EXCEPT ALL TABLE app.orders_usd_b) x)::int AS missing, (SELECT count(*) FROM (TABLE app.orders_usd_b EXCEPT ALL TABLE app.orders_usd) x)::int AS extra',
      );
      expect(rows[0]).toEqual({ missing: 0, extra: 0 });
    } finally {
      for (const w of workers) await w.stop();
    }
  });
});

describeWithServer('on the production Temporal server as four services', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await bringUp(true);
  }, 240_000);
  afterAll(() => d?.down());

  test('a run survives its history service SIGKILLed, then its frontend, each started again: exact, the ledger consistent', async () => {
    const run = await startSlowRun(d, 'prod-services');
    await untilRowsRead(run.runId, 8_000);
    await d.server.kill('history');
    await pause(3000);
    await d.server.start('history');
    await untilRowsRead(run.runId, 20_000);
    await d.server.kill('frontend');
    await pause(3000);
    await d.server.start('frontend');
    expect(await finalStatus(run.runId)).toBe('succeeded');
    expect((await waitForResult(run.handle)).status).toBe('succeeded');
    expect(await audit(run.runId)).toEqual({ target: expect.objectContaining({ missing: 0, extra: 0 }), ledger: [] });
  });
});
