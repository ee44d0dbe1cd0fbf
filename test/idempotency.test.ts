/**
 * Writes are idempotent by construction: rows that are already correct are not rewritten
 * (their xmin stays), a second run of a finished spec writes nothing, a TypeScript
 * transform gives the same rows as SQL, and a run that continues-as-new mid-way (with
 * partitions still running) still ends exact.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { waitForResult } from '../src/cli/start-run';
import type { SpecInput } from '../src/spec/schema';
import { diffAgainstExpected, EXPECTED_SQL, ordersSpec, writeSpec } from './helpers/orders';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('idem', { rows: 210_000 });





async function run(spec: SpecInput, extra: { maxHistoryEvents?: number } = {}) {
  const started = await env.start(spec, { ...extra });
  return { started, result: await waitForResult(started.handle) };
}

async function xmins(where: string): Promise<Map<string, string>> {
  const { rows } = await env.db.pool.query<{ id: string; x: string }>(`SELECT id, xmin::text AS x FROM app.orders_usd WHERE ${where}`);
  return new Map(rows.map((r) => [r.id, r.x]));
}

test('rows already correct keep their xmin, and a second run of the same spec writes 0 rows', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  // a third of the target is already right, a tenth is wrong
  await env.db.pool.query(`INSERT INTO app.orders_usd SELECT * FROM (${EXPECTED_SQL}) e WHERE e.id % 3 = 0`);
  await env.db.pool.query(`INSERT INTO app.orders_usd SELECT id, tenant, created_at, -1 FROM (${EXPECTED_SQL}) e WHERE e.id % 3 <> 0 AND e.id % 10 = 1`);
  const correct = await xmins('id % 3 = 0');
  const wrong = (await xmins('id % 3 <> 0 AND id % 10 = 1')).size;

  const spec = ordersSpec(env.db.envVar, { name: 'idem-xmin' });
  const { result: first } = await run(spec);
  expect(first.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  expect(first.rowsUnchanged).toBe(correct.size);
  expect(first.rowsWritten).toBe(first.rowsRead - correct.size);
  expect(first.rowsWritten).toBeGreaterThan(wrong);
  expect(await xmins('id % 3 = 0')).toEqual(correct);

  const everything = await xmins('true');
  const { result: second } = await run(spec);
  expect(second).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: first.rowsRead, rowsRead: first.rowsRead });
  expect(await xmins('true')).toEqual(everything);
});

test('a TypeScript transform module produces exactly what the SQL statement produces', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const moduleFile = path.join(path.dirname(writeSpec('x: 1')), `orders-usd-${Date.now()}.ts`);
  writeFileSync(
    moduleFile,
    `
    // exact decimal arithmetic: rates in millionths, rounded half away from zero like PostgreSQL's round()
    const RATES: Record<string, bigint> = { USD: 1000000n, EUR: 1083200n, GBP: 1265000n, JPY: 6712n };
    interface Order { id: string; tenant: number; created_at: string; currency: string | null; amount_cents: string | null }
    export default {
      columns: ['id', 'tenant', 'created_at', 'amount_usd'],
      reads: ['id', 'tenant', 'created_at', 'currency', 'amount_cents'],
      version: 3,
      transform(rows: Order[]) {
        return rows.map((r) => {
          const rate = r.currency === null ? undefined : RATES[r.currency];
          let amount: string | null = null;
          if (rate !== undefined && r.amount_cents !== null) {
            const cents = (BigInt(r.amount_cents) * rate + 500000n) / 1000000n;
            amount = (cents / 100n).toString() + '.' + (cents % 100n).toString().padStart(2, '0');
          }
          return { id: r.id, tenant: r.tenant, created_at: r.created_at, amount_usd: amount };
        });
      },
    };
    `,
  );
  const spec = ordersSpec(env.db.envVar, {
    name: 'idem-module',
    partition: { by: 'time', column: 'created_at', size: '1 day' },
    transform: { name: 'orders-usd-ts', version: 3, module: moduleFile },
  });
  const { result } = await run(spec);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  const { result: again } = await run(spec);
  expect(again).toMatchObject({ status: 'succeeded', rowsWritten: 0 });
});

test('a run that continues-as-new while partitions are running still ends exact, each partition counted once', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = ordersSpec(env.db.envVar, {
    name: 'idem-can',
    partition: { by: 'range', column: 'id', size: 20_000 },
    limits: { chunkSize: 5000, concurrency: 3 },
  });
  const { started, result } = await run(spec, { maxHistoryEvents: 40 });
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total).toBeGreaterThanOrEqual(30);
  expect(result.partitions.succeeded).toBe(result.partitions.total);
  const latest = await env.client.workflow.getHandle(started.workflowId).describe();
  expect(latest.runId).not.toBe(started.handle.firstExecutionRunId);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  const { rows } = await env.db.pool.query(
    "SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1 AND (status <> 'succeeded' OR completions <> 1)",
    [started.runId],
  );
  expect(rows[0].n).toBe(0);
});
