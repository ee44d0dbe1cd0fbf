/**
 * The replication-lag guard against a real streaming replica: replay paused on the standby
 * makes the primary's pg_stat_replication.replay_lag grow while the backfill writes; the run
 * holds within one chunk, says why (ledger, status, progress), and continues by itself once
 * the replica has caught up, ending exact.
 */
import { waitForResult } from '../src/operations';
import { statusReport } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import { createPool } from '../src/db/pool';
import { getRun } from '../src/ledger/runs';
import { progressQuery } from '../src/workflows/messages';
import { startRun } from '../src/operations';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { startPrimaryWithReplica, type PrimaryWithReplica } from './helpers/replica';
import { startTestWorker, testClient, uniqueQueue, type TestWorker } from './helpers/temporal';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let servers: PrimaryWithReplica;
let pool: pg.Pool;
let worker: TestWorker;
let client: Client;
let closeClient: () => Promise<void>;

beforeAll(async () => {
  servers = await startPrimaryWithReplica();
  process.env.BF_TEST_DB_PRIMARY = servers.primaryUrl;
  pool = createPool(servers.primaryUrl, { max: 4, applicationName: 'backfill-test' });
  await createOrders(pool, 60_000);
  worker = await startTestWorker(uniqueQueue('replica'));
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  await worker?.stop();
  await closeClient?.();
  await pool?.end();
  await servers?.stop();
});

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const chunks = async (runId: string) =>
  (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM backfill.chunks WHERE run_id = $1', [runId])).rows[0].n;
const holds = async (runId: string) =>
  (await pool.query<{ r: string }>('SELECT hold_reason AS r FROM backfill.partitions WHERE run_id = $1 AND hold_reason IS NOT NULL', [runId])).rows.map(
    (r) => r.r,
  );

test('a replica whose replay falls behind holds the run, which continues by itself when it catches up', async () => {
  const spec = ordersSpec('BF_TEST_DB_PRIMARY', {
    name: 'replica-lag',
    partition: { by: 'range', column: 'id', size: 100_000 },
    limits: { chunkSize: 1000, concurrency: 2, rowsPerSecond: 8000, guards: { replicationLagSeconds: { hard: 1 } } },
  });
  const started = await startRun({ client, taskQueue: worker.taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
  await waitUntil(async () => (await chunks(started.runId)) > 3, 'first chunks');

  await servers.pauseReplay();
  await waitUntil(
    async () => (await holds(started.runId)).some((h) => /^held by replicationLagSeconds \d+\.\d\d > hard 1$/.test(h)),
    'the lag to hold the run',
  );
  // chunks in flight commit; after that nothing is written while the replica lags
  await sleep(1500);
  const held = await chunks(started.runId);
  await sleep(2500);
  expect(await chunks(started.runId)).toBe(held);
  expect(renderStatus(await statusReport(pool, (await getRun(pool, started.runId))!))).toMatch(/held by replicationLagSeconds/);
  await waitUntil(
    async () => (await started.handle.query(progressQuery)).conditions.some((c) => c.state === 'held' && /replicationLagSeconds/.test(c.reason ?? '')),
    'progress to show the hold',
  );

  await servers.resumeReplay();
  await waitUntil(async () => (await chunks(started.runId)) > held + 2, 'writes to resume once the replica caught up');
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
});
