/**
 * Backfill as a library, through the package entry alone (src/index.ts): a worker embedded with
 * createWorker, and plan, start, the event stream, status, pause, resume, report and revert
 * through openBackfill — the target exact after the run, and as it was after the revert.
 */
import pino from 'pino';
import { createWorker, openBackfill, type Backfill, type RunEvent, type RunningWorker } from '../src';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { TEST_DATABASES, temporalAddress, uniqueQueue, workflowBundle } from './helpers/temporal';

let db: TestDatabase;
let worker: RunningWorker;
let backfill: Backfill;
const taskQueue = uniqueQueue('library');

beforeAll(async () => {
  db = await createTestDatabase('library');
  await createOrders(db.pool, 30_000);
  const temporal = { address: temporalAddress(), namespace: 'default', taskQueue };
  worker = await createWorker({
    temporal,
    workflowBundle: await workflowBundle(),
    trust: { databases: [TEST_DATABASES] },
    logger: pino({ level: 'warn' }),
    pausePollMs: 200,
    imageRetention: false,
  });
  backfill = openBackfill({ database: db.envVar, temporal });
});

afterAll(async () => {
  await backfill?.close();
  await worker?.stop();
  await db?.drop();
});

async function eventsUntilEnd(runId: string): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of backfill.events(runId, { intervalMs: 200 })) seen.push(event);
  return seen;
}

test('plan, start, follow, pause, resume, report and revert a run without the CLI', async () => {
  const original = await db.pool.query('SELECT count(*)::int AS n, sum(amount_usd) AS s FROM app.orders_usd');
  const specFile = writeSpec(
    ordersSpec(db.envVar, { name: 'library', partition: { by: 'range', column: 'id', size: 5_000 }, limits: { chunkSize: 1_000, concurrency: 1 } }),
  );

  const plan = await backfill.plan(specFile);
  expect(plan).toMatchObject({ name: 'library', partitions: expect.any(Array), estimate: { scope: { rows: expect.any(Number) } } });
  expect(plan.partitions.length).toBeGreaterThan(3);

  const started = await backfill.start(specFile, { actor: 'library-test' });
  expect(started).toMatchObject({
    name: 'library',
    partitions: plan.partitions.length,
    webUi: expect.stringContaining(encodeURIComponent(started.workflowId)),
  });
  const paused = await backfill.pause(started.runId, { actor: 'library-test', reason: 'look first' });
  expect(paused).toMatchObject({ runId: started.runId, applied: true });
  expect(await backfill.status(started.runId)).toMatchObject({ paused: true, webUi: expect.any(String) });
  await expect(backfill.pause(started.runId)).rejects.toThrow(/already paused/);
  expect(await backfill.resume(started.runId, { actor: 'library-test' })).toMatchObject({ applied: true });

  const events = await eventsUntilEnd(started.runId);
  expect(events[0]).toMatchObject({ type: 'status', from: null });
  expect(events.at(-1)).toEqual({ type: 'ended', runId: started.runId, status: 'succeeded' });
  const last = events.filter((e) => e.type === 'progress').at(-1);
  expect(last).toMatchObject({ partitions: { total: plan.partitions.length, done: plan.partitions.length, failed: 0 } });
  expect(events.some((e) => e.type === 'partition-failed')).toBe(false);
  expect(await started.result()).toMatchObject({ status: 'succeeded' });
  expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0 });

  const status = await backfill.status(started.runId);
  expect(status).toMatchObject({ status: 'succeeded', startedBy: 'library-test', totals: { byStatus: { succeeded: plan.partitions.length } } });
  expect(await backfill.report(started.runId, 'markdown')).toContain(started.runId);
  expect((await backfill.report(started.runId)).summary).toMatchObject({ runId: started.runId, name: 'library' });
  expect((await backfill.list()).map((r) => r.runId)).toContain(started.runId);

  const reverted = await backfill.revert(started.runId, { reason: 'library test', actor: 'library-test' });
  expect(await reverted.result()).toMatchObject({ status: 'succeeded' });
  expect((await db.pool.query('SELECT count(*)::int AS n, sum(amount_usd) AS s FROM app.orders_usd')).rows[0]).toEqual(original.rows[0]);
});

test('an unknown run is a usage error naming the ledger it looked in', async () => {
  await expect(backfill.status('20990101-0000-0000000000000000')).rejects.toThrow(new RegExp(`unknown run .* in the ledger of ${db.envVar}`));
});
