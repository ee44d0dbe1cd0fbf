/**
 * `plan` and `start` warn when chunks would be expensive to find: no index returns a
 * partition's rows in key order, so every chunk would read and sort its whole partition.
 * The warning names the fix, and goes away once the fix is in place.
 */
import { checkSpec } from '../src/operations';
import { ordersSpec, writeSpec } from './helpers/orders';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('access', { rows: 100_000, worker: false });

// the test's superuser connection has its own warning (test/least-privilege.test.ts); these are about chunk access
const warningsOf = async (overrides: Parameters<typeof ordersSpec>[1]) =>
  (await checkSpec(writeSpec(ordersSpec(env.db.envVar, overrides)))).warnings.filter((w) => !w.startsWith('database: connected as'));

test('partitions that no index returns in key order are warned about, with the fix', async () => {
  // range partitions on the key itself: each chunk is an index range scan
  expect(await warningsOf({ partition: { by: 'range', column: 'id', size: 50_000 } })).toEqual([]);

  // a tenant's orders are scattered over the id space and the tenant index does not return them in id order
  const list = { partition: { by: 'list' as const, column: 'tenant' }, limits: { chunkSize: 1000, concurrency: 2 } };
  const [warning] = await warningsOf(list);
  expect(warning).toMatch(
    /^partition: chunks are found by scanning the id index and filtering on tenant, so every chunk reads past other partitions' rows \(about (1[0-9]|[2-9]\d),\d{3} rows read per chunk of 1000, estimated for tenant#\S+\); create an index on app\.orders \(tenant, id\), which returns each partition's rows in id order$/,
  );
  await env.db.pool.query('CREATE INDEX orders_tenant_id ON app.orders (tenant, id); ANALYZE app.orders');
  expect(await warningsOf(list)).toEqual([]);

  // days of orders whose ids do not grow with time: chunks walk (created_at, id) along the created_at index
  const days = { partition: { by: 'time' as const, column: 'created_at', size: '1 day' }, limits: { chunkSize: 500, concurrency: 2 } };
  expect(await warningsOf(days)).toEqual([]);
  await env.db.pool.query('DROP INDEX app.orders_created_at_idx; ANALYZE app.orders');
  expect(await warningsOf(days)).toEqual([
    expect.stringMatching(
      /^partition: no index returns a partition's rows in \(created_at, id\) order, so every chunk reads and sorts its whole partition \(about [\d,]+ rows read per chunk of 500, estimated for day:\S+\); create an index on app\.orders \(created_at\): chunks then walk it$/,
    ),
  ]);
});

test('partitions so small that orchestration sets the pace are warned about, with a size to use instead', async () => {
  // 100,000 orders with ids up to 300,000, in 400 range partitions: about 250 rows each
  const tiny = { partition: { by: 'range' as const, column: 'id', size: 750 }, limits: { chunkSize: 1000, concurrency: 2 } };
  const warnings = await warningsOf(tiny);
  expect(warnings).toEqual([
    expect.stringMatching(
      /^partition: about 2\d\d source rows per partition on average \(4\d\d partitions; the planner's estimate\), so orchestration, not writing, will set the pace: .* a partition\.size about \d+× larger would run faster$/,
    ),
  ]);
  expect(await warningsOf({ ...tiny, partition: { ...tiny.partition, size: 75_000 } })).toEqual([]);
});
