/**
 * Workers scale out: three worker processes, started as deployed (`node dist/client.js
 * worker`), share one run's partitions. The chunk log names the worker that wrote each chunk,
 * so the share is read from the ledger, as an operator would read it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startRun, statusReportFor, waitForResult } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { temporalAddress, testClient, uniqueQueue } from './helpers/temporal';
import { waitUntil } from './helpers/wait';

const ROOT = path.join(__dirname, '..');
const WORKERS = 3;

let db: TestDatabase;
let client: Client;
let closeClient: () => Promise<void>;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('share');
  await createOrders(db.pool, 60_000);
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await closeClient?.();
  await db?.drop();
});

test("three worker processes each write at least 20 % of a run's partitions, and the chunk log says which wrote what", async () => {
  const taskQueue = uniqueQueue('share');
  for (let i = 0; i < WORKERS; i++) {
    workers.push(
      spawn(process.execPath, [path.join(ROOT, 'dist', 'client.js'), 'worker'], {
        cwd: ROOT,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: temporalAddress(),
          BACKFILL_TASK_QUEUE: taskQueue,
          BACKFILL_DATABASES: db.envVar,
          LOG_LEVEL: 'warn',
          BACKFILL_WORKER_IDENTITY: `share-worker-${i + 1}`,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    );
  }
  // every worker polls before the run starts: a worker still bundling its workflows would otherwise miss the first wave
  await waitUntil(
    async () => {
      const described = await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: 2 /* activity */,
      });
      return new Set(described.pollers.map((p) => p.identity)).size >= WORKERS;
    },
    'three workers polling',
    60_000,
  );

  const spec = ordersSpec(db.envVar, { name: 'share', partition: { by: 'range', column: 'id', size: 2000 }, limits: { chunkSize: 1000, concurrency: 6 } });
  const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total).toBeGreaterThanOrEqual(60);
  expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0 });

  // the worker that wrote a partition's last chunk finished it
  const { rows } = await db.pool.query<{ worker: string | null; partitions: number }>(
    `SELECT worker, count(*)::int AS partitions FROM (
       SELECT DISTINCT ON (partition_id) partition_id, worker FROM backfill.chunks WHERE run_id = $1 ORDER BY partition_id, seq DESC) last
      GROUP BY worker ORDER BY worker`,
    [started.runId],
  );
  expect(rows.map((r) => r.worker)).toEqual(['share-worker-1', 'share-worker-2', 'share-worker-3']);
  const total = rows.reduce((n, r) => n + r.partitions, 0);
  expect(total).toBe(result.partitions.total);
  for (const r of rows) expect(r.partitions / total).toBeGreaterThanOrEqual(0.2);

  // status says who wrote what
  const report = await statusReportFor(db.pool, started.runId);
  expect(report.workers.map((w) => w.worker).sort()).toEqual(['share-worker-1', 'share-worker-2', 'share-worker-3']);
  expect(report.workers.reduce((n, w) => n + w.rows, 0)).toBe(result.rowsRead);
  expect(renderStatus(report)).toMatch(
    /^ {2}workers: {3}3 wrote its chunks \(share of rows read\): share-worker-\d \d+ %, share-worker-\d \d+ %, share-worker-\d \d+ %$/m,
  );
});
