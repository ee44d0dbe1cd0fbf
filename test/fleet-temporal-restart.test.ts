/**
 * A fleet across Temporal server restarts (docs/fleets.md): three real PostgreSQL clusters, a
 * worker process next to each, and a Temporal dev server of this file's own on a SQLite file,
 * SIGKILLed twice mid-fleet — while the first wave's member writes, and while the second wave's
 * do — and started again on its file. The fleet goes on from its history: its waves in order,
 * each member resumed from its checkpoints, every member exact, no key range committed twice.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { BackfillClient } from '../src/api/backfill';
import { createPool } from '../src/db/pool';
import { databaseQueueOf } from './helpers/database-queue';
import { ensureDatabase } from '../src/dev/postgres';
import { ensureTemporalCli } from '../src/dev/temporal-cli';
import { freePort, startDevServer, type DevServer } from '../src/dev/temporal-server';
import { connectClient } from '../src/temporal/connect';
import { databaseWorkers } from '../src/temporal/task-queue-pollers';
import { runCli } from './helpers/cli';
import { startClusters, type Clusters } from './helpers/clusters';
import { spawnDatabaseWorker } from './helpers/database-worker';
import { expectMemberExact } from './helpers/fleet-members';
import { createOrders, ordersSpec, writeSpec } from './helpers/orders';
import { uniqueQueue } from './helpers/temporal';
import { waitUntil } from './helpers/wait';

const ROWS = 6_000;
const VARS = ['BF_FLEETRESTART_A', 'BF_FLEETRESTART_B', 'BF_FLEETRESTART_C'] as const;
const [A, B, C] = VARS;
const baseQueue = uniqueQueue('fleet-restart');

let tmp: string;
let clusters: Clusters;
let server: DevServer;
let restartServer: () => Promise<void>;
let backfill: BackfillClient;
const pools = new Map<string, pg.Pool>();
const workers: ChildProcess[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'backfill-fleet-restart-'));
  const cliPath = await ensureTemporalCli();
  const port = await freePort();
  const dbFile = path.join(tmp, 'temporal.db');
  const start = () => startDevServer({ cliPath, port, uiPort: null, dbFile });
  [clusters, server] = await Promise.all([startClusters(VARS.length), start()]);
  restartServer = async () => {
    // SIGKILL, as when its host dies; 3 s later it comes back on its file
    const exited = new Promise((resolve) => server.process.once('exit', resolve));
    server.process.kill('SIGKILL');
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    server = await start();
  };
  backfill = new BackfillClient('DATABASE_URL', { address: server.address, taskQueue: baseQueue });
  const { client, close } = await connectClient({ address: server.address, namespace: 'default' });
  try {
    for (const [i, variable] of VARS.entries()) {
      process.env[variable] = await ensureDatabase(clusters.urls[i], 'fleet_restart');
      const pool = createPool(process.env[variable]!, { max: 3 });
      pool.on('error', () => undefined);
      pools.set(variable, pool);
      await createOrders(pool, ROWS);
      const queue = await databaseQueueOf(baseQueue, variable, pool);
      workers.push(spawnDatabaseWorker(variable, baseQueue, undefined, server.address));
      await waitUntil(async () => (await databaseWorkers(client.workflow, queue)).serving, `the worker of ${variable} to poll its queue`, 60_000);
    }
  } finally {
    await close();
  }
});

afterAll(async () => {
  for (const child of workers) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await backfill?.close();
  for (const pool of pools.values()) await pool.end();
  await server?.stop();
  await clusters?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  for (const variable of VARS) delete process.env[variable];
});

const rowsRead = async (variable: string, runId: string): Promise<number> => {
  const pool = pools.get(variable)!;
  if ((await pool.query("SELECT to_regclass('backfill.runs') IS NULL AS none")).rows[0].none) return 0;
  return (await pool.query('SELECT coalesce(sum(rows_read), 0)::int AS n FROM backfill.partitions WHERE run_id = $1', [runId])).rows[0].n;
};

test('the Temporal server SIGKILLed in each wave and started again on its file: the fleet goes on from its history, its waves in order, every member exact', async () => {
  const { database: _one, ...spec } = ordersSpec('unused', {
    name: 'fleet-restart',
    partition: { by: 'range', column: 'id', size: 2_000 },
    limits: { chunkSize: 300, concurrency: 2, rowsPerSecond: 600 },
  });
  const started = await backfill.startFleet(writeSpec({ ...spec, databases: [...VARS], fleet: { waves: [1, '100%'], concurrency: 2 } }), { actor: 'test' });
  const member = (v: string) => started.members.find((m) => m.variable === v)!;

  // wave 1: A writes; Temporal goes away under it and comes back
  await waitUntil(async () => (await rowsRead(A, member(A).runId)) >= 900, 'A to be under way', 60_000);
  await restartServer();
  // wave 2 starts only once A has succeeded, after the restart: B and C write; Temporal goes away again
  await waitUntil(
    async () => (await rowsRead(B, member(B).runId)) >= 900 && (await rowsRead(C, member(C).runId)) >= 900,
    'the second wave to be under way',
    120_000,
  );
  const finishedA = (await pools.get(A)!.query('SELECT status, finished_at FROM backfill.runs WHERE run_id = $1', [member(A).runId])).rows[0];
  expect(finishedA.status).toBe('succeeded');
  await restartServer();

  const result = await started.result();
  expect(result.status).toBe('succeeded');
  expect(result.members.map((m) => [m.variable, m.wave, m.status])).toEqual([
    [A, 1, 'succeeded'],
    [B, 2, 'succeeded'],
    [C, 2, 'succeeded'],
  ]);
  for (const v of VARS) await expectMemberExact(pools.get(v)!, v, member(v).runId);
  // the second wave registered after the first had finished
  for (const v of [B, C]) {
    const registered = (await pools.get(v)!.query('SELECT created_at FROM backfill.runs WHERE run_id = $1', [member(v).runId])).rows[0].created_at as Date;
    expect(registered.getTime()).toBeGreaterThan((finishedA.finished_at as Date).getTime());
  }
  const status = await runCli(['status', started.fleetId], { TEMPORAL_ADDRESS: server.address, BACKFILL_TASK_QUEUE: baseQueue });
  expect(status.stdout).toMatch(new RegExp(`Fleet fleet-restart/${started.fleetId}: SUCCEEDED — wave 2 of 2, 3 of 3 member\\(s\\) succeeded`));
});
