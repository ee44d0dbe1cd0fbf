/**
 * The worker process is killed with SIGKILL in the middle of partitions, twice, at
 * different points. After each restart the run resumes from the ledger's checkpoints
 * and ends exact: every partition succeeded exactly once, and the counts add up to the
 * source. Workers here are real processes (dist/worker.js), as operators deploy them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startRun, waitForResult } from '../src/operations';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, diffAgainstExpected, ordersSpec, WHERE, writeSpec } from './helpers/orders';
import { TEST_DATABASES, temporalAddress, testClient, uniqueQueue } from './helpers/temporal';

let db: TestDatabase;
let client: Client;
let closeClient: () => Promise<void>;
const taskQueue = uniqueQueue('crash');
const workers: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('crash');
  await createOrders(db.pool, 200_000);
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await closeClient?.();
  await db?.drop();
});

function startWorkerProcess(): ChildProcess {
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'dist', 'worker.js')], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), BACKFILL_TASK_QUEUE: taskQueue, BACKFILL_DATABASES: TEST_DATABASES, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  workers.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ledger(runId: string) {
  const { rows } = await db.pool.query(
    `SELECT coalesce(sum(rows_read), 0)::int AS read,
            count(*) FILTER (WHERE status = 'running' AND chunks > 0)::int AS mid
       FROM backfill.partitions WHERE run_id = $1`,
    [runId],
  );
  return rows[0] as { read: number; mid: number };
}

async function waitForMidPartition(runId: string, minRows: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const l = await ledger(runId);
    if (l.read >= minRows && l.mid > 0) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} never reached ${minRows} rows with a partition mid-way (${JSON.stringify(l)})`);
    await sleep(50);
  }
}

test('a worker killed with SIGKILL mid-partition, twice, leaves a run that resumes and writes every row exactly once', async () => {
  const spec = ordersSpec(db.envVar, {
    name: 'crash',
    partition: { by: 'range', column: 'id', size: 50_000 },
    limits: { chunkSize: 2000, concurrency: 3, rowsPerSecond: 25_000 },
  });
  let worker = startWorkerProcess();
  const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });

  await waitForMidPartition(started.runId, 40_000);
  await kill(worker);
  const afterFirst = await ledger(started.runId);
  worker = startWorkerProcess();

  await waitForMidPartition(started.runId, afterFirst.read + 60_000);
  await kill(worker);
  worker = startWorkerProcess();

  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });

  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS partitions,
            count(*) FILTER (WHERE status = 'succeeded' AND completions = 1)::int AS once,
            max(attempts)::int AS max_attempts,
            sum(rows_read)::int AS read, sum(rows_written)::int AS written
       FROM backfill.partitions WHERE run_id = $1`,
    [started.runId],
  );
  const source = await db.pool.query(`SELECT count(*)::int AS n FROM app.orders WHERE ${WHERE}`);
  expect(rows[0].once).toBe(rows[0].partitions);
  // the kills landed inside partitions: some partition needed more than one attempt
  expect(rows[0].max_attempts).toBeGreaterThan(1);
  // the target started empty, so every row was written exactly once
  expect(rows[0].read).toBe(source.rows[0].n);
  expect(rows[0].written).toBe(source.rows[0].n);
  await kill(worker);
});
