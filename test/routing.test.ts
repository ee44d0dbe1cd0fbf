/**
 * Workers next to their databases, all on one task queue: three PostgreSQL clusters, one worker
 * process each that holds only its own database's variable (the least-privilege set-up), runs on
 * all three at once. Each run's work goes to its database's queue (domain/ids.ts
 * databaseTaskQueue), so no worker is ever handed another database's work; a database whose
 * worker leaves holds its run, saying so, and the run finishes exact once a worker is back.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { createPool } from '../src/db/pool';
import { ensureDatabase } from '../src/dev/postgres';
import { chunkWriters } from '../src/ledger/chunks';
import { startRun, waitForResult, type StartedRun } from '../src/operations';
import { runWorkerGap } from '../src/operations/database-workers';
import { databaseWorkers } from '../src/temporal/task-queue-pollers';
import { databaseQueueOf } from './helpers/database-queue';
import { pollUntil } from '../src/util/poll-until';
import { runCli } from './helpers/cli';
import { startClusters, type Clusters } from './helpers/clusters';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { testClient, uniqueQueue } from './helpers/temporal';
import { startsFirst } from './helpers/turns';
import { spawnDatabaseWorker } from './helpers/database-worker';
import { waitUntil } from './helpers/wait';

startsFirst('three PostgreSQL clusters, and a worker gone long enough for Temporal to forget it: minutes');

const ROWS = 12_000;
const VARS = ['BF_FLEET_A', 'BF_FLEET_B', 'BF_FLEET_C'] as const;
type Var = (typeof VARS)[number];
const baseQueue = uniqueQueue('routing');

let clusters: Clusters;
let client: Client;
let closeClient: () => Promise<void>;
const pools = new Map<Var, pg.Pool>();
const queues = new Map<Var, string>();
const workers = new Map<Var, ChildProcess>();
const workerLogs = new Map<Var, string>();

/** `backfill worker` in its own process, holding only `variable`'s URL, on the common base queue. */
async function startWorker(variable: Var): Promise<void> {
  workerLogs.set(variable, '');
  const child = spawnDatabaseWorker(variable, baseQueue, (text) => workerLogs.set(variable, workerLogs.get(variable) + text));
  workers.set(variable, child);
  await waitUntil(async () => (await databaseWorkers(client.workflow, queues.get(variable)!)).serving, `the worker of ${variable} to poll its queue`, 60_000);
}

async function stopWorker(variable: Var): Promise<void> {
  const child = workers.get(variable);
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  clusters = await startClusters(VARS.length);
  ({ client, close: closeClient } = await testClient());
  for (const [i, variable] of VARS.entries()) {
    // the operator's shell holds every URL (to plan and start); each worker only its own
    process.env[variable] = await ensureDatabase(clusters.urls[i], 'routing');
    const pool = createPool(process.env[variable]!, { max: 4 });
    pools.set(variable, pool);
    await createOrders(pool, ROWS);
    queues.set(variable, await databaseQueueOf(baseQueue, variable, pool));
  }
  await Promise.all(VARS.map(startWorker));
});

afterAll(async () => {
  for (const variable of VARS) await stopWorker(variable);
  for (const pool of pools.values()) await pool.end();
  await closeClient?.();
  await clusters?.stop();
  for (const variable of VARS) delete process.env[variable];
});

function start(variable: Var, name: string, limits: Record<string, unknown> = {}): Promise<StartedRun> {
  const spec = ordersSpec(variable, {
    name,
    partition: { by: 'range', column: 'id', size: 1_000 },
    limits: { chunkSize: 250, concurrency: 3, ...limits },
  });
  return startRun({ client, taskQueue: baseQueue }, { specFile: writeSpec(spec), actor: 'test' });
}

/** Every activity failure in the histories of a run and of its partitions (a refusal would be one). */
async function activityFailures(run: StartedRun): Promise<string[]> {
  const failures: string[] = [];
  const ids = [run.workflowId];
  for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH '${run.workflowId}/'` })) ids.push(w.workflowId);
  for (const id of ids) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    for (const e of history.events ?? [])
      if (e.activityTaskFailedEventAttributes) failures.push(`${id}: ${e.activityTaskFailedEventAttributes.failure?.message}`);
  }
  return failures;
}

async function expectExact(variable: Var, run: StartedRun): Promise<void> {
  const pool = pools.get(variable)!;
  expect(await diffAgainstExpected(pool)).toMatchObject({ missing: 0, extra: 0 });
  // every chunk written by the worker next to this database
  expect((await chunkWriters(pool, run.runId)).map((w) => w.worker)).toEqual([`worker-${variable}`]);
  const { rows } = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1 AND (status <> 'succeeded' OR last_error IS NOT NULL)",
    [run.runId],
  );
  expect(rows[0].n).toBe(0);
}

test("one worker per database on one task queue: a run on each database at once is exact, and no worker is handed another database's work", async () => {
  const runs = await Promise.all(VARS.map((v, i) => start(v, `routing-all-${i}`)));
  const results = await Promise.all(runs.map((r) => waitForResult(r.handle)));
  for (const [i, variable] of VARS.entries()) {
    expect(results[i]).toMatchObject({ status: 'succeeded', partitions: { failed: 0, cancelled: 0 } });
    await expectExact(variable, runs[i]);
    expect(await activityFailures(runs[i])).toEqual([]);
  }
  // the run workflows stay on the common queue; the work went to each database's own
  const described = await runs[0].handle.describe();
  expect(described.taskQueue).toBe(baseQueue);
  expect(described.memo).toMatchObject({ database: VARS[0], databaseQueue: queues.get(VARS[0]) });
});

test('a database whose worker leaves mid-run holds its run and says so; the others finish; the worker back, the run finishes exact', async () => {
  for (const pool of pools.values()) await pool.query('TRUNCATE app.orders_usd');
  // B's run is paced so that its worker leaves while it is under way
  const [a, b, c] = await Promise.all([
    start(VARS[0], 'routing-gone-a'),
    start(VARS[1], 'routing-gone-b', { rowsPerSecond: 1_500 }),
    start(VARS[2], 'routing-gone-c'),
  ]);
  const pb = pools.get(VARS[1])!;
  const rowsRead = async () =>
    Number((await pb.query('SELECT coalesce(sum(rows_read), 0) AS n FROM backfill.partitions WHERE run_id = $1', [b.runId])).rows[0].n);
  await waitUntil(async () => (await rowsRead()) > 1_000, 'B to be under way', 60_000);
  await stopWorker(VARS[1]);
  const readWhenStopped = await rowsRead();

  for (const [variable, run] of [
    [VARS[0], a],
    [VARS[2], c],
  ] as const) {
    expect(await waitForResult(run.handle)).toMatchObject({ status: 'succeeded', partitions: { failed: 0 } });
    await expectExact(variable, run);
  }

  // Temporal forgets a poller only after it has stopped polling for a while: then B's run says why it stands still
  const gap = await pollUntil(() => runWorkerGap(client.workflow, b.workflowId), { timeoutMs: 180_000, intervalMs: 1_000 });
  expect(gap).toMatchObject({ database: VARS[1], queue: queues.get(VARS[1]) });
  const status = await runCli(['status', b.runId, '--database', VARS[1]], { BACKFILL_TASK_QUEUE: baseQueue });
  expect(status.stdout).toMatch(
    new RegExp(`waiting: +no worker serves ${VARS[1]} since \\d\\d:\\d\\d:\\d\\d UTC: the run waits for one, nothing fails; start one where ${VARS[1]} is set`),
  );
  // the run workflow (on the common queue, whose workers are up) says so in the Web UI's current details
  const details = await pollUntil(
    async () => {
      const metadata = await b.handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      return metadata.currentDetails?.includes('Waiting for a worker') ? metadata.currentDetails : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 1_000 },
  );
  expect(details).toMatch(
    new RegExp(`\\*\\*Waiting for a worker:\\*\\* no worker serves ${VARS[1]} since \\d\\d:\\d\\d:\\d\\d UTC; the run goes on when one does`),
  );
  // held, never failed: nothing moved, nothing failed, the workflow runs on
  expect((await b.handle.describe()).status.name).toBe('RUNNING');
  expect(await rowsRead()).toBe(readWhenStopped);
  const { rows } = await pb.query<{ n: number }>("SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1 AND status = 'failed'", [b.runId]);
  expect(rows[0].n).toBe(0);

  await startWorker(VARS[1]);
  expect(await waitForResult(b.handle)).toMatchObject({ status: 'succeeded', partitions: { failed: 0 } });
  await expectExact(VARS[1], b);
  expect(await runWorkerGap(client.workflow, b.workflowId)).toBeUndefined();
  const after = await b.handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  expect(after.currentDetails).not.toContain('Waiting for a worker');
});
