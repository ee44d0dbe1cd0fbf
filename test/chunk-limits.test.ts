/**
 * A chunk's statements run under the spec's limits, SET LOCAL in the chunk's own
 * transaction: a transform that runs too long is cancelled by PostgreSQL and fails its
 * partition with what to do, instead of holding locks and a connection for as long as it likes.
 */
import { waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';

const env = useTestEnvironment('limits', { rows: 300 });

test('a transform slower than limits.statementTimeoutSeconds fails its partition, saying which limit and what to do', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'slow-transform',
      partition: { by: 'range', column: 'id', size: 1_000_000 },
      // pg_sleep is volatile: declared, so the spec is accepted and the run records it
      transform: {
        name: 'slow',
        version: 1,
        allowVolatile: true,
        sql: 'SELECT c.id, c.tenant, c.created_at, (c.amount_cents + 0 * length(pg_sleep(0.5)::text))::numeric(14,2) AS amount_usd FROM chunk c',
      },
      limits: { chunkSize: 100, concurrency: 1, statementTimeoutSeconds: 1 },
    }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  const { rows } = await env.db.pool.query<{ last_error: string; status: string; rows_written: string }>(
    'SELECT last_error, status, rows_written FROM backfill.partitions WHERE run_id = $1',
    [started.runId],
  );
  expect(rows).toEqual([
    {
      status: 'failed',
      rows_written: '0',
      last_error: expect.stringMatching(
        /^partition id:000000000-001000000 failed at id in \[0, \d+\]: a statement was cancelled after running up to limits\.statementTimeoutSeconds \(1 s\), or by an operator; lower limits\.chunkSize \(or raise the timeout\), then: backfill retry-failed /,
      ),
    },
  ]);
  const { rows: shape } = await env.db.pool.query('SELECT shape FROM backfill.runs WHERE run_id = $1', [started.runId]);
  expect(shape[0].shape.transformReads.volatile).toEqual(['pg_sleep (pg_sleep(double precision))']);
  const { rows: target } = await env.db.pool.query('SELECT count(*)::int AS n FROM app.orders_usd');
  expect(target[0].n).toBe(0);
});
