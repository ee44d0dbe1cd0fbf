/**
 * Reconciliation, always on: before a chunk commits, the target must hold every row the
 * transform produced, as it produced it, and the counts must add up (written + unchanged +
 * skipped = produced). A trigger that quietly rewrites values on the target is caught; update
 * mode's rows without a target row are counted as skipped, never silently lost.
 */
import { statusReportFor, waitForResult } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec } from './helpers/orders';

const env = useTestEnvironment('reconcile', { rows: 30_000 });

test('a trigger rewriting some values on the target fails their partitions, and nothing of those chunks is committed', async () => {
  await env.db.pool.query(`
    CREATE FUNCTION app.round_up() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id BETWEEN 40000 AND 40100 THEN NEW.amount_usd := NEW.amount_usd + 0.01; END IF; RETURN NEW; END $$;
    CREATE TRIGGER round_up BEFORE INSERT OR UPDATE ON app.orders_usd FOR EACH ROW EXECUTE FUNCTION app.round_up()`);
  try {
    const started = await env.start(
      ordersSpec(env.db.envVar, {
        name: 'reconcile-trigger',
        partition: { by: 'range', column: 'id', size: 30_000 },
        limits: { chunkSize: 5000, concurrency: 3 },
      }),
    );
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('failed');
    const { rows } = await env.db.pool.query<{ partition_id: string; last_error: string; error_detail: string }>(
      "SELECT partition_id, last_error, error_detail FROM backfill.partitions WHERE run_id = $1 AND status = 'failed'",
      [started.runId],
    );
    expect(rows.map((r) => r.partition_id)).toEqual(['id:000030000-000060000']);
    expect(rows[0].last_error).toMatch(
      /failed at id in .*: reconciliation failed: after the write, app\.orders_usd does not hold what the transform computed for \d+ row\(s\) \(other values\); a trigger or rule on app\.orders_usd may be rewriting them\. Nothing of this chunk was committed \(partition id:000030000-000060000; keys in the ledger\)/,
    );
    expect(rows[0].error_detail).toMatch(/keys: 400\d\d/);
    // the chunk holding the rewritten rows committed nothing; the other partitions are exact
    const { rows: touched } = await env.db.pool.query('SELECT count(*)::int AS n FROM app.orders_usd WHERE id BETWEEN 40000 AND 40100');
    expect(touched[0].n).toBe(0);
    expect(await diffAgainstExpected(env.db.pool, 'id < 30000 OR id >= 60000')).toMatchObject({ missing: 0, extra: 0 });
  } finally {
    await env.db.pool.query('DROP TRIGGER round_up ON app.orders_usd; TRUNCATE app.orders_usd');
  }
});

test('update mode counts the rows it skips (no target row), and the counts add up', async () => {
  // the target holds two thirds of the keys: update writes those, and skips the rest visibly
  await env.db.pool.query(
    "INSERT INTO app.orders_usd (id, tenant, created_at) SELECT id, tenant, created_at FROM app.orders WHERE status <> 'void' AND id % 3 <> 0",
  );
  const started = await env.start(ordersSpec(env.db.envVar, { name: 'reconcile-update', target: { table: 'app.orders_usd', key: ['id'], mode: 'update' } }));
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const report = await statusReportFor(env.db.pool, started.runId);
  const { rows } = await env.db.pool.query(
    "SELECT count(*) FILTER (WHERE id % 3 = 0)::int AS absent, count(*)::int AS produced FROM app.orders WHERE status <> 'void'",
  );
  expect(report.totals.rowsSkipped).toBe(rows[0].absent);
  expect(report.totals.rowsWritten + report.totals.rowsUnchanged + report.totals.rowsSkipped!).toBe(rows[0].produced);
  expect(renderStatus(report)).toMatch(/skipped/);
  expect(await diffAgainstExpected(env.db.pool, 'id % 3 <> 0')).toMatchObject({ missing: 0, extra: 0 });
});
