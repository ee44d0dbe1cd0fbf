/**
 * A run ends `succeeded` only when every partition it planned is in the ledger and
 * succeeded. Partition ids can no longer collide (list partitions are named by their place);
 * were a plan ever to hold one id twice, registration refuses it rather than let the plan's
 * insert skip a partition, as it once did when two list values hashed to one id. At its end
 * the run proves the ledger's partitions tile the planned scope, each completed once; a
 * ledger edited by hand fails that proof.
 */
import { waitForResult } from '../src/operations';
import { pollUntil } from '../src/util/poll-until';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec } from './helpers/orders';

const env = useTestEnvironment('planintegrity', { rows: 30_000 });

test('list partitions over values alike enough to have shared a hashed id all run', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  await env.db.pool.query("ALTER TABLE app.orders ADD COLUMN label text; UPDATE app.orders SET label = repeat('customer-', 8) || (id % 50)");
  const started = await env.start(
    ordersSpec(env.db.envVar, { name: 'alike-values', partition: { by: 'list', column: 'label' }, limits: { chunkSize: 5000, concurrency: 8 } }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total).toBe(50);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
});

/** Starts a slow 4-partition run, lets `edit` change the ledger once the first partition succeeded, and returns the run's ending. */
async function runWithLedgerEdit(name: string, edit: (runId: string) => Promise<void>) {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name,
      partition: { by: 'range', column: 'id', size: 30_000 },
      limits: { chunkSize: 2000, concurrency: 1, rowsPerSecond: 20_000 },
    }),
  );
  const first = () =>
    env.db.pool
      .query("SELECT 1 FROM backfill.partitions WHERE run_id = $1 AND ordinal = 0 AND status = 'succeeded'", [started.runId])
      .then((r) => (r.rowCount ? true : undefined));
  expect(await pollUntil(first, { timeoutMs: 30_000, intervalMs: 50 })).toBe(true);
  await edit(started.runId);
  await waitForResult(started.handle);
  const { rows } = await env.db.pool.query('SELECT status, last_error FROM backfill.runs WHERE run_id = $1', [started.runId]);
  return rows[0] as { status: string; last_error: string };
}

test('a succeeded partition removed from the ledger by hand makes the completeness proof fail', async () => {
  const ending = await runWithLedgerEdit('proof-removed', (runId) =>
    env.db.pool.query('DELETE FROM backfill.partitions WHERE run_id = $1 AND ordinal = 0', [runId]).then(() => undefined),
  );
  expect(ending).toEqual({
    status: 'failed',
    last_error: expect.stringMatching(
      /^the run cannot be shown complete: the ledger holds 3 partitions but the plan had 4; partition id:000030000-000060000 is number 1 of the plan where 0 was expected \(a partition is missing before it\); start a new run$/,
    ),
  });
});

test('bounds edited into a gap make the completeness proof fail', async () => {
  const ending = await runWithLedgerEdit('proof-gap', (runId) =>
    env.db.pool
      .query(`UPDATE backfill.partitions SET bounds = jsonb_set(bounds, '{hi}', '"29000"') WHERE run_id = $1 AND ordinal = 0`, [runId])
      .then(() => undefined),
  );
  expect(ending).toEqual({
    status: 'failed',
    last_error:
      'the run cannot be shown complete: partition id:000030000-000060000 starts at 30000 but the one before it ends at 29000: a gap; start a new run',
  });
});
