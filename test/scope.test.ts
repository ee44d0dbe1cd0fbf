/**
 * A run's scope is fixed when it is planned: partitions cover the source from its first key
 * (or day, or value) to its last, as they were then. Rows that arrive later outside every
 * planned partition are not backfilled; the run counts them at its end and `status` says how
 * many, and what covers them, instead of ending as if they were included.
 */
import { statusReportFor, waitForResult } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';

const env = useTestEnvironment('scope', { rows: 20_000 });

test('rows inserted beyond the planned partitions during a run are counted and reported with the way to cover them', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'scope-drift',
      partition: { by: 'range', column: 'id', size: 10_000 },
      limits: { chunkSize: 2000, concurrency: 2, rowsPerSecond: 8000 },
    }),
  );
  // the application keeps inserting: 25 new paid orders above the last planned bound, 5 void ones (out of scope)
  await env.db.pool.query(`
    INSERT INTO app.orders (id, created_at, tenant, currency, amount_cents, status)
    SELECT 1000000 + g, timestamptz '2024-03-05', 1, 'USD', 100, CASE WHEN g <= 25 THEN 'paid' ELSE 'void' END FROM generate_series(1, 30) g`);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const report = await statusReportFor(env.db.pool, started.runId);
  expect(report.rowsOutsidePlan).toBe(25);
  expect(renderStatus(report)).toContain(
    `scope:     25 row(s) in scope arrived after planning outside every planned partition and were not backfilled; cover them with a new run: backfill start ${report.specFile}`,
  );
});

test('a run whose scope did not grow reports nothing', async () => {
  const started = await env.start(ordersSpec(env.db.envVar, { name: 'scope-still', partition: { by: 'time', column: 'created_at', size: '1 day' } }));
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  const report = await statusReportFor(env.db.pool, started.runId);
  expect(report.rowsOutsidePlan).toBe(0);
  expect(renderStatus(report)).not.toContain('scope:');
});
