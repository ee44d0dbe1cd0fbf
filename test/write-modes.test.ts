/**
 * End to end on the real dev server and PostgreSQL: every write mode with every kind of
 * partition produces exactly what one SQL statement produces, row by row both ways.
 */
import { waitForResult } from '../src/operations';
import { diffAgainstExpected, ordersSpec } from './helpers/orders';
import type { SpecInput } from '../src/specs/schema';
import { useTestEnvironment } from './helpers/environment';

const ROWS = 210_000;
const env = useTestEnvironment('modes', { rows: ROWS });
const PARTITIONS: Record<string, SpecInput['partition']> = {
  range: { by: 'range', column: 'id', size: 100_000 },
  time: { by: 'time', column: 'created_at', size: '1 day' },
  list: { by: 'list', column: 'tenant' },
};

async function runSpec(spec: SpecInput) {
  const started = await env.start(spec);
  return waitForResult(started.handle);
}

describe.each(['upsert', 'update', 'replace'] as const)('%s mode', (mode) => {
  test.each(Object.keys(PARTITIONS))(`with %s partitions matches one SQL statement row by row`, async (kind) => {
    await env.db.pool.query('TRUNCATE app.orders_usd');
    if (mode === 'update') {
      // update writes into existing rows only: the target holds every key with stale values
      await env.db.pool.query("INSERT INTO app.orders_usd (id, tenant, created_at) SELECT id, tenant, created_at FROM app.orders WHERE status <> 'void'");
    }
    const partitionColumn = kind === 'range' ? 'id' : kind === 'time' ? 'created_at' : 'tenant';
    const spec = ordersSpec(env.db.envVar, {
      name: `modes-${mode}-${kind}`,
      partition: PARTITIONS[kind],
      target: { table: 'app.orders_usd', key: ['id'], mode, ...(mode === 'replace' ? { partitionColumn } : {}) },
    });
    const result = await runSpec(spec);
    expect(result.status).toBe('succeeded');
    expect(await diffAgainstExpected(env.db.pool)).toEqual({ missing: 0, extra: 0, targetRows: result.rowsRead, expectedRows: result.rowsRead });
    expect(result.partitions.failed).toBe(0);
  });
});
