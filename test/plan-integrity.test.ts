/**
 * A run ends `succeeded` only when every partition it planned is in the ledger and
 * succeeded. Partition ids can no longer collide (list partitions are named by their place);
 * were a plan ever to hold one id twice, registration refuses it rather than let the plan's
 * insert skip a partition, as it once did when two list values hashed to one id.
 */
import { waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec } from './helpers/orders';

const env = useTestEnvironment('planintegrity', { rows: 30_000 });

test('list partitions over values alike enough to have shared a hashed id all run', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  await env.db.pool.query("ALTER TABLE app.orders ADD COLUMN label text; UPDATE app.orders SET label = repeat('customer-', 8) || (id % 50)");
  const started = await env.start(ordersSpec(env.db.envVar, { name: 'alike-values', partition: { by: 'list', column: 'label' }, limits: { chunkSize: 5000, concurrency: 8 } }));
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total).toBe(50);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
});
