/**
 * Declared distributions: the target column's shape is captured before the run writes and at
 * its end; a drift beyond tolerance fails the run. Cleanup of temporary state happens only
 * once the run is verified; plan-time checks refuse declarations that cannot run.
 */
import { cleanupRefusal } from '../src/after-actions/cleanup-run';
import { waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { EXPECTED_SQL, ordersSpec, TRANSFORM_SQL } from './helpers/orders';

const env = useTestEnvironment('distrib', { rows: 20_000 });

beforeEach(async () => {
  // the target already holds last month's values: the baseline the run is compared with
  await env.db.pool.query(`TRUNCATE app.orders_usd; INSERT INTO app.orders_usd SELECT * FROM (${EXPECTED_SQL}) e`);
});

const scaled = (factor: string) =>
  TRANSFORM_SQL.replace('round(c.amount_cents * f.usd_rate / 100.0, 2)', `round(c.amount_cents * f.usd_rate * ${factor} / 100.0, 2)`);

test('a mean that moves 20 % against a 5 % tolerance fails the run, with both captures kept for the report', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'distrib-drift',
      transform: { name: 'orders-usd', version: 7, sql: scaled('1.2') },
      validate: { distributions: [{ column: 'amount_usd', mean: 0.05, nullRate: 0.01 }] },
    }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  const { rows: run } = await env.db.pool.query('SELECT last_error, cleaned_at FROM backfill.runs WHERE run_id = $1', [started.runId]);
  expect(run[0].last_error).toMatch(/the final check failed: distribution:amount_usd \(1 measure\(s\) beyond tolerance\)/);
  expect(run[0].cleaned_at).toBeNull();
  const { rows: gate } = await env.db.pool.query("SELECT passed, examples FROM backfill.gate_results WHERE run_id = $1 AND gate = 'distribution:amount_usd'", [
    started.runId,
  ]);
  expect(gate[0].passed).toBe(false);
  expect(gate[0].examples).toMatch(/^mean moved by 2\d(\.\d+)? % \(tolerance 5 %\)$/);
  const { rows: captures } = await env.db.pool.query<{ stage: string; rows: string; mean: number; histogram: { counts: number[] } }>(
    'SELECT stage, rows, mean, histogram FROM backfill.distributions WHERE run_id = $1 ORDER BY stage DESC',
    [started.runId],
  );
  expect(captures.map((c) => c.stage)).toEqual(['before', 'after']);
  expect(captures[1].mean / captures[0].mean).toBeCloseTo(1.2, 2);
  // the after histogram uses the before range: the scaled values spill into the top bucket
  expect(captures[1].histogram.counts[11]).toBeGreaterThan(0);
  expect(await cleanupRefusal(env.db.pool, started.runId)).toMatch(/is failed: its state stays until it is verified/);
});

test('a drift within tolerance passes; the verified run removes its temporary state itself', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'distrib-ok',
      transform: { name: 'orders-usd', version: 8, sql: scaled('1.01') },
      validate: { distributions: [{ column: 'amount_usd', mean: 0.05, quantiles: 0.05, distinct: 0.5 }] },
      limits: { chunkSize: 5000, concurrency: 2, rowsPerSecond: 1_000_000 },
    }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const { rows } = await env.db.pool.query(
    "SELECT (SELECT cleaned_at IS NOT NULL FROM backfill.runs WHERE run_id = $1) AS cleaned, (SELECT count(*)::int FROM backfill.rate_limits WHERE run_id = $1) AS buckets, (SELECT passed FROM backfill.gate_results WHERE run_id = $1 AND gate = 'distribution:amount_usd') AS passed",
    [started.runId],
  );
  expect(rows[0]).toEqual({ cleaned: true, buckets: 0, passed: true });
  const { rows: events } = await env.db.pool.query("SELECT kind FROM backfill.run_events WHERE run_id = $1 AND kind IN ('finished', 'cleaned') ORDER BY id", [
    started.runId,
  ]);
  expect(events.map((e) => e.kind)).toEqual(['finished', 'cleaned']);
});

test('declarations that cannot run are refused at start, before anything is written', async () => {
  await expect(
    env.start(ordersSpec(env.db.envVar, { name: 'distrib-bad', validate: { distributions: [{ column: 'amount_eur', mean: 0.1 }] } })),
  ).rejects.toThrow(/validate\.distributions\.0\.column.*app\.orders_usd has no column amount_eur/s);
  await expect(
    env.start(ordersSpec(env.db.envVar, { name: 'distrib-bad', validate: { invariants: [{ name: 'x', sql: 'SELECT s.nope FROM source_rows s' }] } })),
  ).rejects.toThrow(/validate\.invariants\.0\.sql.*does not run against the database: column s\.nope does not exist/s);
  await expect(env.start(ordersSpec(env.db.envVar, { name: 'distrib-bad', validate: { distributions: [{ column: 'amount_usd' }] } }))).rejects.toThrow(
    /needs at least one tolerance/,
  );
  const { rows } = await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.runs WHERE name = 'distrib-bad'");
  expect(rows[0].n).toBe(0);
});
