/**
 * The table-shape matrix: key types (bigint, uuid, text in "C" and in ICU, composite
 * (bigint, timestamptz), (text, bigint) and (bigint, integer)) × partitionings (range by count
 * and by size, time, list, native) × plain and partitioned sources and targets, with quoted
 * mixed-case names and names with a space, a quote and a reserved word. Each shape is planned, run,
 * compared with one statement row for row, verified, and run again without a write. Small
 * tables: the shapes are the point.
 */
import { verifyRun, waitForResult } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import type { SpecInput } from '../src/specs/schema';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { writeSpec } from './helpers/orders';
import { createShapeTables, q, targetDifferences, type TableShape } from './helpers/table-shapes';

const env = useTestEnvironment('matrix', { rows: 0 });
const ROWS = 1200;

const SHAPES: TableShape[] = [
  { name: 'BigintCount', key: [['id', 'bigint']], values: ['g * 7'], partition: { by: 'range', column: 'id', count: 5 } },
  { name: 'UuidTime', key: [['id', 'uuid']], values: ['md5(g::text)::uuid'], partition: { by: 'time', column: 'createdAt', size: '2 days' } },
  { name: 'TextCList', key: [['sku', 'text COLLATE "C"']], values: ["'Sku-' || md5(g::text)"], partition: { by: 'list', column: 'Tenant' } },
  {
    name: 'TextIcuCount',
    key: [['sku', 'text COLLATE "en-US-x-icu"']],
    values: ["(ARRAY['a-', 'B_', 'ß'])[1 + g % 3] || md5(g::text)"],
    partition: { by: 'range', column: 'sku', count: 4 },
  },
  {
    name: 'CompositeTimeNative',
    key: [
      ['id', 'bigint'],
      ['createdAt', 'timestamptz'],
    ],
    values: ['g % 300', "timestamptz '2024-01-01' + g * interval '61 minutes'"],
    partition: { by: 'native', column: 'createdAt' },
    partitioned: {
      by: 'RANGE ("createdAt")',
      leaves: ["FOR VALUES FROM ('2024-01-01') TO ('2024-01-20')", "FOR VALUES FROM ('2024-01-20') TO ('2024-02-10')", 'DEFAULT'],
    },
    partitionedTarget: true,
  },
  {
    name: 'CompositeTenantNative',
    key: [
      ['Tenant', 'text'],
      ['id', 'bigint'],
    ],
    values: ["'t' || (g % 4)", 'g'],
    partition: { by: 'native', column: 'Tenant' },
    partitioned: { by: 'LIST ("Tenant")', leaves: ["FOR VALUES IN ('t0', 't1')", "FOR VALUES IN ('t2')", 'DEFAULT'] },
  },
  {
    // a space, a reserved word and a single quote in the names: the table, the key columns, the partition column
    name: 'Order Lines',
    key: [
      ['order', 'bigint'],
      ["line 'no'", 'integer'],
    ],
    values: ['g / 3', 'g % 3'],
    partition: { by: 'range', column: 'order', size: 100 },
  },
  {
    name: 'CompositeTenantTime',
    key: [
      ['Tenant', 'text'],
      ['id', 'bigint'],
    ],
    values: ["'t' || (g % 4)", 'g'],
    partition: { by: 'time', column: 'createdAt', size: '1 week' },
  },
];

beforeAll(() => createShapeTables(env.db.pool, SHAPES, ROWS));

function specOf(s: TableShape): SpecInput {
  const keys = s.key.map(([c]) => c);
  return {
    name: `matrix-${s.name.toLowerCase().replace(/\W+/g, '-')}`,
    reason: 'test: the table-shape matrix',
    database: env.db.envVar,
    source: { table: `public.${s.name}`, key: keys.length === 1 ? keys[0] : keys },
    partition: s.partition,
    transform: { name: 'double', version: 1, sql: `SELECT ${keys.map((k) => `c.${q(k)}`).join(', ')}, c."Amount" * 2 AS "Doubled" FROM chunk c` },
    target: { table: `public.${s.name}Out`, key: keys, mode: 'upsert' },
    limits: { chunkSize: 150, concurrency: 2 },
    validate: { finalCheck: 'all' },
  };
}

test.each(SHAPES.map((s) => [s.name, s] as const))('%s: planned, run exactly, verified, re-run without a write', async (_, s) => {
  const spec = specOf(s);
  const plan = await runCli(['plan', writeSpec(spec), '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  expect((JSON.parse(plan.stdout) as { partitions: unknown[] }).partitions.length).toBeGreaterThan(1);

  const first = await env.start(spec);
  expect(await waitForResult(first.handle)).toMatchObject({ status: 'succeeded', rowsWritten: ROWS });
  expect(await targetDifferences(env.db.pool, s)).toBe(0);
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, first.runId))!)).clean).toBe(true);
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });
});

test('a run of many small partitions in groups, on quoted names with a space, a quote and a reserved word and a composite key: exact, verified', async () => {
  const s = SHAPES.find((shape) => shape.name === 'Order Lines')!;
  // 400 orders in ranges of 10: some 40 partitions of 30 rows, in chunks of 150
  const spec = { ...specOf(s), name: 'matrix-order-lines-grouped', partition: { by: 'range' as const, column: 'order', size: 10 } };
  await env.db.pool.query(`TRUNCATE public.${q(`${s.name}Out`)}`);
  const run = await env.start(spec);
  expect(await waitForResult(run.handle)).toMatchObject({ status: 'succeeded', rowsWritten: ROWS });
  expect(await targetDifferences(env.db.pool, s)).toBe(0);
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, run.runId))!)).clean).toBe(true);
  const { rows } = await env.db.pool.query<{ partitions: number; groups: number; grouped: number }>(
    `SELECT count(*)::int AS partitions, count(DISTINCT workflow_id)::int AS groups, count(*) FILTER (WHERE workflow_id LIKE '%/group/%')::int AS grouped
       FROM backfill.partitions WHERE run_id = $1`,
    [run.runId],
  );
  expect(rows[0].partitions).toBeGreaterThanOrEqual(40);
  expect(rows[0].grouped).toBeGreaterThan(rows[0].partitions / 2);
  // concurrency 2: groups of two, a few alone (a page of the plan ending mid-group)
  expect(rows[0].groups).toBeLessThanOrEqual(rows[0].partitions * 0.6);
});
