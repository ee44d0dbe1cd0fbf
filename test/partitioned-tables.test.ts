/**
 * The largest historical tables as production has them: declaratively partitioned by month,
 * with the primary key (id, occurred_at) that PostgreSQL requires there, ids that repeat across
 * months (so no one column is unique), timestamp(3). A composite source.key is walked as a row
 * comparison: planned, written exactly, checked, verified and re-run without a write, by time
 * (walking (occurred_at, id)) and by range on the key's first column (walking the key, with an
 * id's rows split across chunk boundaries). Naming one column of such a key is refused with the
 * key that works. Cut into many one-chunk day partitions, it runs in groups (README, "Small
 * partitions in groups").
 */
import { resolveSpec } from '../src/specs/resolve';
import { verifyRun, waitForResult } from '../src/operations';
import { compileRun } from '../src/compiler/statements';
import { inputChanges } from '../src/preflight/input-fingerprints';
import { runInputs } from '../src/preflight/run-inputs';
import type { PartitionBounds } from '../src/domain/types';
import { getRun, type RunRow } from '../src/ledger/runs';
import type { SpecInput } from '../src/specs/schema';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { writeSpec } from './helpers/orders';

const env = useTestEnvironment('partitioned', { rows: 0 });
const ROWS = 10_000;

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE TABLE public.events (
      id bigint NOT NULL, occurred_at timestamp(3) NOT NULL, tenant text NOT NULL, amount_cents bigint NOT NULL,
      PRIMARY KEY (id, occurred_at)) PARTITION BY RANGE (occurred_at);
    CREATE TABLE public.events_2024_01 PARTITION OF public.events FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
    CREATE TABLE public.events_2024_02 PARTITION OF public.events FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
    CREATE TABLE public.events_2024_03 PARTITION OF public.events FOR VALUES FROM ('2024-03-01') TO ('2024-04-01');
    CREATE TABLE public.events_default PARTITION OF public.events DEFAULT;
    -- each id four times, in four different months; milliseconds in the time
    INSERT INTO public.events
      SELECT g % 2500, timestamp '2024-01-01' + g * interval '10 minutes 0.123 seconds', 't' || (g % 7), g * 3
        FROM generate_series(1, ${ROWS}) g;
    CREATE INDEX ON public.events (occurred_at, id);
    CREATE TABLE public.event_totals (
      id bigint NOT NULL, occurred_at timestamp(3) NOT NULL, amount numeric(14,2) NOT NULL,
      PRIMARY KEY (id, occurred_at)) PARTITION BY RANGE (occurred_at);
    CREATE TABLE public.event_totals_all PARTITION OF public.event_totals DEFAULT;
    ANALYZE public.events;
  `);
});

function eventsSpec(overrides: Partial<SpecInput> = {}): SpecInput {
  return {
    name: 'partitioned-events',
    reason: 'test: a partitioned table with a composite key',
    database: env.db.envVar,
    source: { table: 'public.events', key: ['id', 'occurred_at'] },
    partition: { by: 'time', column: 'occurred_at', size: '7 days' },
    transform: { name: 'event-amounts', version: 1, sql: 'SELECT c.id, c.occurred_at, round(c.amount_cents / 100.0, 2) AS amount FROM chunk c' },
    target: { table: 'public.event_totals', key: ['id', 'occurred_at'], mode: 'upsert' },
    limits: { chunkSize: 300, concurrency: 2 },
    validate: { finalCheck: 'all' },
    ...overrides,
  };
}

async function differences(): Promise<number> {
  const { rows } = await env.db.pool.query(`
    WITH expected AS (SELECT id, occurred_at, round(amount_cents / 100.0, 2) AS amount FROM public.events)
    SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM public.event_totals) a)
         + (SELECT count(*) FROM (SELECT * FROM public.event_totals EXCEPT SELECT * FROM expected) b) AS n`);
  return Number(rows[0].n);
}

/** Runs the spec over every row: succeeded, the target exact, `verify` clean; its ledger row. */
async function runExactAndVerified(spec: SpecInput): Promise<RunRow> {
  const started = await env.start(spec);
  expect(await waitForResult(started.handle)).toMatchObject({ status: 'succeeded', rowsWritten: ROWS });
  expect(await differences()).toBe(0);
  const run = (await getRun(env.db.pool, started.runId))!;
  expect((await verifyRun(env.db.pool, run)).clean).toBe(true);
  return run;
}

test("one column of a partitioned table's key is refused at plan, naming the key that works", async () => {
  const plan = await runCli(['plan', writeSpec(eventsSpec({ source: { table: 'public.events', key: 'id' } }))]);
  expect(plan.code).toBe(2);
  expect(plan.stderr).toContain('source.key id is not unique on public.events, but (id, occurred_at) is: set source.key: [id, occurred_at]');
  const tenant = await runCli(['plan', writeSpec(eventsSpec({ source: { table: 'public.events', key: ['tenant', 'id'] } }))]);
  expect(tenant.code).toBe(2);
  expect(tenant.stderr).toContain('a partitioned table whose unique indexes must include its partition key (occurred_at)');
  expect(tenant.stderr).toContain('source.key: [tenant, id, occurred_at]');
});

test.each([
  ['by time, walking (occurred_at, id)', { partition: { by: 'time', column: 'occurred_at', size: '7 days' } }],
  [
    'by range on id, walking (id, occurred_at) with an id split across chunks',
    { partition: { by: 'range', column: 'id', size: 500 }, limits: { chunkSize: 150, concurrency: 2 } },
  ],
] as [string, Partial<SpecInput>][])(
  'a composite key on a partitioned table, %s: planned, written exactly, verified, re-run without a write',
  async (_, overrides) => {
    await env.db.pool.query('TRUNCATE public.event_totals');
    const spec = eventsSpec(overrides);
    const plan = await runCli(['plan', writeSpec(spec), '-o', 'json']);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(JSON.parse(plan.stdout).partitions.length).toBeGreaterThan(1);

    const run = await runExactAndVerified(spec);
    // chunks really were cut inside partitions, on the composite cursor
    const { rows } = await env.db.pool.query<{ cursor: string }>('SELECT cursor FROM backfill.partitions WHERE run_id = $1 AND cursor IS NOT NULL LIMIT 1', [
      run.run_id,
    ]);
    expect(JSON.parse(rows[0].cursor)).toHaveLength(2);

    expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });
  },
);

test("partition.by native: one backfill partition per leaf, each chunk pruned to its leaf; exact, verified, re-run without a write; a leaf attached later changes the run's inputs", async () => {
  await env.db.pool.query('TRUNCATE public.event_totals');
  const spec = eventsSpec({ partition: { by: 'native', column: 'occurred_at' } });
  const plan = await runCli(['plan', writeSpec(spec), '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  expect((JSON.parse(plan.stdout) as { partitions: { id: string }[] }).partitions.map((p) => p.id)).toEqual([
    'leaf:public.events_2024_01',
    'leaf:public.events_2024_02',
    'leaf:public.events_2024_03',
    'leaf:public.events_default',
  ]);

  const run = await runExactAndVerified(spec);

  // the chunk statement a worker runs for February reads February's leaf and no other
  const compiled = compileRun(resolveSpec(run.spec), run.shape);
  const { rows: feb } = await env.db.pool.query<{ bounds: PartitionBounds }>(
    "SELECT bounds FROM backfill.partitions WHERE run_id = $1 AND partition_id = 'leaf:public.events_2024_02'",
    [run.run_id],
  );
  const q = compiled.chunkBounds(feb[0].bounds, null, 100);
  const explained = (await env.db.pool.query(`EXPLAIN ${q.text}`, q.values)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
  expect(explained).toContain('events_2024_02');
  expect(explained).not.toMatch(/events_2024_01|events_2024_03|events_default/);

  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });

  const before = await runInputs(env.db.pool, resolveSpec(run.spec), run.shape);
  await env.db.pool.query("CREATE TABLE public.events_2024_05 PARTITION OF public.events FOR VALUES FROM ('2024-05-01') TO ('2024-06-01')");
  const after = await runInputs(env.db.pool, resolveSpec(run.spec), run.shape);
  expect(inputChanges(before, after, 'at registration')).toEqual([expect.stringContaining('public.events (leaf partitions)')]);
  await env.db.pool.query('DROP TABLE public.events_2024_05');
});

test('partition.by native with rows: a big leaf is cut into key ranges of about equal rows, each chunk still pruned to its leaf; exact, verified, re-run without a write', async () => {
  await env.db.pool.query('TRUNCATE public.event_totals');
  // January (about 4,460 rows) and February (4,180) are cut in three; March (1,360) and the default leaf stay whole
  const spec = eventsSpec({ name: 'partitioned-events-cut', partition: { by: 'native', column: 'occurred_at', rows: 1500 } });
  const plan = await runCli(['plan', writeSpec(spec), '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect((JSON.parse(plan.stdout) as { partitions: { id: string }[] }).partitions.map((p) => p.id)).toEqual([
    'leaf:public.events_2024_01~001',
    'leaf:public.events_2024_01~002',
    'leaf:public.events_2024_01~003',
    'leaf:public.events_2024_02~001',
    'leaf:public.events_2024_02~002',
    'leaf:public.events_2024_02~003',
    'leaf:public.events_2024_03',
    'leaf:public.events_default',
  ]);

  const run = await runExactAndVerified(spec);

  // the pieces of a leaf hold about equal rows (within 25 % of their mean) and no more than rows by much
  const { rows: pieces } = await env.db.pool.query<{ partition_id: string; rows_written: string; bounds: PartitionBounds }>(
    "SELECT partition_id, rows_written, bounds FROM backfill.partitions WHERE run_id = $1 AND partition_id LIKE '%~%' ORDER BY ordinal",
    [run.run_id],
  );
  for (const month of ['01', '02']) {
    const counts = pieces.filter((p) => p.partition_id.includes(`2024_${month}~`)).map((p) => Number(p.rows_written));
    const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
    expect({ month, spread: counts.map((n) => Math.abs(n - mean) / mean <= 0.25) }).toEqual({ month, spread: [true, true, true] });
  }

  // a middle piece of February reads February's leaf alone, within its key range
  const compiled = compileRun(resolveSpec(run.spec), run.shape);
  const middle = pieces.find((p) => p.partition_id === 'leaf:public.events_2024_02~002')!;
  expect(middle.bounds).toMatchObject({ kind: 'leaf', split: { column: 'id', lo: expect.any(String), hi: expect.any(String), piece: 2 } });
  const q = compiled.chunkBounds(middle.bounds, null, 100);
  const explained = (await env.db.pool.query(`EXPLAIN ${q.text}`, q.values)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
  expect(explained).toContain('events_2024_02');
  expect(explained).not.toMatch(/events_2024_01|events_2024_03|events_default/);

  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });
});

test('a partitioned table in some seventy day partitions of one chunk: they run in groups; exact, verified, re-run without a write', async () => {
  await env.db.pool.query('TRUNCATE public.event_totals');
  const spec = eventsSpec({
    name: 'partitioned-events-grouped',
    partition: { by: 'time', column: 'occurred_at', size: '1 day' },
    limits: { chunkSize: 300, concurrency: 4 },
  });
  const run = await runExactAndVerified(spec);
  const { rows } = await env.db.pool.query<{ partitions: number; grouped: number }>(
    `SELECT count(*)::int AS partitions, count(*) FILTER (WHERE workflow_id LIKE '%/group/%')::int AS grouped FROM backfill.partitions WHERE run_id = $1`,
    [run.run_id],
  );
  expect(rows[0].partitions).toBeGreaterThanOrEqual(40);
  expect(rows[0].grouped).toBeGreaterThan(rows[0].partitions / 2);
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });
});

test('partition.by native is refused where it cannot work, with the reason', async () => {
  const column = await runCli(['plan', writeSpec(eventsSpec({ partition: { by: 'native', column: 'id' } }))]);
  expect(column.code).toBe(2);
  expect(column.stderr).toContain("partition.column must be public.events's partition key: occurred_at");
  await env.db.pool.query('CREATE TABLE public.plain_events (LIKE public.events INCLUDING ALL)');
  const plain = await runCli([
    'plan',
    writeSpec(eventsSpec({ source: { table: 'public.plain_events', key: ['id', 'occurred_at'] }, partition: { by: 'native', column: 'occurred_at' } })),
  ]);
  expect(plain.code).toBe(2);
  expect(plain.stderr).toContain('partition.by is native, but public.plain_events is not a partitioned table');

  // a partition key of two columns: refused with a way forward, and the way forward plans
  await env.db.pool.query(`
    CREATE TABLE public.sharded_events (LIKE public.events INCLUDING DEFAULTS, PRIMARY KEY (tenant, occurred_at, id)) PARTITION BY RANGE (tenant, occurred_at);
    CREATE TABLE public.sharded_events_all PARTITION OF public.sharded_events DEFAULT;
    INSERT INTO public.sharded_events SELECT * FROM public.events WHERE id < 100;`);
  const sharded = (partition: SpecInput['partition']) =>
    writeSpec(eventsSpec({ source: { table: 'public.sharded_events', key: ['tenant', 'occurred_at', 'id'] }, partition }));
  const twoColumns = await runCli(['plan', sharded({ by: 'native', column: 'tenant' })]);
  expect(twoColumns.code).toBe(2);
  expect(twoColumns.stderr).toContain(
    'partition.by is native, which takes a table partitioned on one column; public.sharded_events is partitioned on (tenant, occurred_at): partition by time or range (count: N) on tenant instead',
  );
  const fixed = await runCli(['plan', sharded({ by: 'range', column: 'tenant', count: 3 })]);
  expect(fixed.stderr).toBe('');
  expect(fixed.code).toBe(0);
});
