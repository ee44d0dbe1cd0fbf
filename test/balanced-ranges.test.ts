/**
 * `by: range` with `count`: ranges of about equal rows on keys with no grid to cut by size — a
 * uuid, and a bigint whose values crowd at one end — planned from the column's quantiles (a
 * repeatable sample on a big table), run exactly, verified; every partition within ±25 % of the
 * mean in rows. A size-based plan of the skewed key puts most rows in one partition.
 */
import { verifyRun, waitForResult } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import type { SpecInput } from '../src/specs/schema';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { writeSpec } from './helpers/orders';

const env = useTestEnvironment('balanced', { rows: 0 });
const ROWS = 6000;

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE TABLE public.accounts (id uuid PRIMARY KEY, balance_cents bigint NOT NULL);
    INSERT INTO public.accounts SELECT md5(g::text)::uuid, g * 13 FROM generate_series(1, ${ROWS}) g;
    -- ids crowd at the low end: half the rows lie below 1/4 of the range
    CREATE TABLE public.hits (id bigint PRIMARY KEY, n bigint NOT NULL);
    INSERT INTO public.hits SELECT g::bigint * g, g FROM generate_series(1, ${ROWS}) g;
    CREATE TABLE public.copies (id text PRIMARY KEY, v bigint NOT NULL);
    CREATE TABLE public.big (id uuid PRIMARY KEY);
    INSERT INTO public.big SELECT md5('big' || g)::uuid FROM generate_series(1, 400000) g;
    ANALYZE public.accounts; ANALYZE public.hits; ANALYZE public.big;
  `);
});

function spec(table: string, count: number, value: string): SpecInput {
  return {
    name: `balanced-${table.split('.')[1]}`,
    reason: 'test: ranges of about equal rows',
    database: env.db.envVar,
    source: { table, key: 'id' },
    partition: { by: 'range', column: 'id', count },
    transform: { name: 'copy', version: 1, sql: `SELECT c.id::text AS id, ${value} AS v FROM chunk c` },
    target: { table: 'public.copies', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 250, concurrency: 2 },
    validate: { finalCheck: 'all' },
  };
}

/** Rows per partition as the ledger recorded them. */
async function rowsPerPartition(runId: string): Promise<number[]> {
  const { rows } = await env.db.pool.query<{ n: string }>('SELECT rows_read AS n FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal', [runId]);
  return rows.map((r) => Number(r.n));
}

function withinQuarter(counts: number[]): void {
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  for (const n of counts) expect(Math.abs(n - mean) / mean).toBeLessThanOrEqual(0.25);
}

test.each([
  ['a uuid key', 'public.accounts', 'c.balance_cents'],
  ['a bigint key crowded at one end', 'public.hits', 'c.n'],
])('%s: range by count plans equal ranges, runs exactly, verifies, and never names a value', async (_, table, value) => {
  await env.db.pool.query('TRUNCATE public.copies');
  const s = spec(table, 6, value);
  const plan = await runCli(['plan', writeSpec(s), '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  const ids = (JSON.parse(plan.stdout) as { partitions: { id: string }[] }).partitions.map((p) => p.id);
  expect(ids).toEqual(['id~000001', 'id~000002', 'id~000003', 'id~000004', 'id~000005', 'id~000006']);

  const started = await env.start(s);
  expect(await waitForResult(started.handle)).toMatchObject({ status: 'succeeded', rowsWritten: ROWS });
  const { rows } = await env.db.pool.query(
    `SELECT count(*)::int AS n FROM (SELECT id::text, ${value.replace('c.', 's.')} AS v FROM ${table} s EXCEPT SELECT id, v FROM public.copies) x`,
  );
  expect(rows[0].n).toBe(0);
  withinQuarter(await rowsPerPartition(started.runId));
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, started.runId))!)).clean).toBe(true);
});

test('a big table is cut from a repeatable sample: the same ranges twice, each within ±25 % of the mean', async () => {
  const s = spec('public.big', 8, '0');
  const first = await runCli(['plan', writeSpec(s), '-o', 'json']);
  const again = await runCli(['plan', writeSpec(s), '-o', 'json']);
  expect(first.code).toBe(0);
  const digest = (out: string) => JSON.stringify((JSON.parse(out) as { partitions: unknown[] }).partitions);
  expect(digest(again.stdout)).toBe(digest(first.stdout));
  // the bounds are in the ledger only; count the real rows between the plan's cuts
  const started = await env.start({ ...s, name: 'balanced-big', validate: undefined, limits: { chunkSize: 20000, concurrency: 2 } });
  expect(await waitForResult(started.handle)).toMatchObject({ status: 'succeeded', rowsWritten: 400_000 });
  withinQuarter(await rowsPerPartition(started.runId));
});

test('range by size on a uuid is refused with the fix', async () => {
  const plan = await runCli(['plan', writeSpec({ ...spec('public.accounts', 6, '0'), partition: { by: 'range', column: 'id', size: 1000 } })]);
  expect(plan.code).toBe(2);
  expect(plan.stderr).toContain('by: range with size needs an integer column (use count: N for ranges of about equal rows on any orderable column');
});
