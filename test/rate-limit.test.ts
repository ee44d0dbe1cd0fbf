/**
 * limits.rowsPerSecond is one budget for the whole run: with three worker processes sharing
 * the task queue, the run's measured rate stays within ±10% of the budget, every process
 * does part of the work, and the result is exact.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startRun, waitForResult } from '../src/operations';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { TEST_DATABASES, temporalAddress, testClient, uniqueQueue } from './helpers/temporal';

let db: TestDatabase;
let client: Client;
let closeClient: () => Promise<void>;
const workers: { process: ChildProcess; logs: string }[] = [];

beforeAll(async () => {
  db = await createTestDatabase('rate');
  await createOrders(db.pool, 300_000);
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  for (const w of workers) w.process.kill('SIGKILL');
  await closeClient?.();
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rowsRead(runId: string): Promise<{ rows: number; at: number }> {
  const { rows } = await db.pool.query('SELECT coalesce(sum(rows_read), 0)::int AS n FROM backfill.partitions WHERE run_id = $1', [runId]);
  return { rows: rows[0].n, at: Date.now() };
}

test('three worker processes share one rows/second budget within ±10%', async () => {
  const taskQueue = uniqueQueue('rate');
  for (let i = 0; i < 3; i++) {
    const w = {
      process: spawn(process.execPath, [path.join(__dirname, '..', 'dist', 'worker.js')], {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: temporalAddress(),
          BACKFILL_TASK_QUEUE: taskQueue,
          BACKFILL_DATABASES: TEST_DATABASES,
          LOG_LEVEL: 'info',
          BACKFILL_MAX_ACTIVITIES: '2',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
      logs: '',
    };
    w.process.stderr!.on('data', (d: Buffer) => (w.logs += d.toString()));
    workers.push(w);
  }
  const budget = 25_000;
  const spec = ordersSpec(db.envVar, {
    name: 'rate',
    partition: { by: 'range', column: 'id', size: 50_000 },
    limits: { chunkSize: 1000, concurrency: 6, rowsPerSecond: budget },
  });
  const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
  // measure over a steady window, after the first second's burst
  while ((await rowsRead(started.runId)).rows < budget * 1.5) await sleep(100);
  const a = await rowsRead(started.runId);
  await sleep(6000);
  const b = await rowsRead(started.runId);
  const rate = ((b.rows - a.rows) * 1000) / (b.at - a.at);
  process.stderr.write(`measured ${Math.round(rate)} rows/s against a budget of ${budget}\n`);
  expect(rate).toBeGreaterThan(budget * 0.9);
  expect(rate).toBeLessThan(budget * 1.1);

  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  for (const w of workers) {
    expect(w.logs).toContain(`"runId":"${started.runId}"`);
  }
});
