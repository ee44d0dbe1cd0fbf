/**
 * End to end on the real dev server and PostgreSQL: every write mode with every kind of
 * partition produces exactly what one SQL statement produces, row by row both ways.
 */
import type { Client } from '@temporalio/client';
import { startRun, waitForResult } from '../src/cli/start-run';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { startTestWorker, testClient, uniqueQueue, type TestWorker } from './helpers/temporal';
import type { SpecInput } from '../src/spec/schema';

const ROWS = 210_000;
const PARTITIONS: Record<string, SpecInput['partition']> = {
  range: { by: 'range', column: 'id', size: 100_000 },
  time: { by: 'time', column: 'created_at', size: '1 day' },
  list: { by: 'list', column: 'tenant' },
};

let db: TestDatabase;
let worker: TestWorker;
let client: Client;
let closeClient: () => Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase('modes');
  await createOrders(db.pool, ROWS);
  worker = await startTestWorker(uniqueQueue('modes'));
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  await worker?.stop();
  await closeClient?.();
  await db?.drop();
});

async function runSpec(spec: SpecInput) {
  const started = await startRun({ specFile: writeSpec(spec), client, taskQueue: worker.taskQueue, actor: 'test' });
  return waitForResult(started.handle);
}

describe.each(['upsert', 'update', 'replace'] as const)('%s mode', (mode) => {
  test.each(Object.keys(PARTITIONS))(`with %s partitions matches one SQL statement row by row`, async (kind) => {
    await db.pool.query('TRUNCATE app.orders_usd');
    if (mode === 'update') {
      // update writes into existing rows only: the target holds every key with stale values
      await db.pool.query("INSERT INTO app.orders_usd (id, tenant, created_at) SELECT id, tenant, created_at FROM app.orders WHERE status <> 'void'");
    }
    const partitionColumn = kind === 'range' ? 'id' : kind === 'time' ? 'created_at' : 'tenant';
    const spec = ordersSpec(db.envVar, {
      name: `modes-${mode}-${kind}`,
      partition: PARTITIONS[kind],
      target: { table: 'app.orders_usd', key: ['id'], mode, ...(mode === 'replace' ? { partitionColumn } : {}) },
    });
    const result = await runSpec(spec);
    expect(result.status).toBe('succeeded');
    expect(await diffAgainstExpected(db.pool)).toEqual({ missing: 0, extra: 0, targetRows: result.rowsRead, expectedRows: result.rowsRead });
    expect(result.partitions.failed).toBe(0);
  });
});
