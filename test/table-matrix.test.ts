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

const env = useTestEnvironment('matrix', { rows: 0 });
const ROWS = 1200;

interface Shape {
  name: string;
  /** Key columns with their types, in key order. */
  key: [string, string][];
  /** Each key column's value for row g (SQL over g). */
  values: string[];
  partition: SpecInput['partition'];
  /** PARTITION BY clause and leaves for a partitioned source; absent for a plain table. */
  partitioned?: { by: string; leaves: string[] };
  partitionedTarget?: boolean;
}

const q = (name: string) => `"${name}"`;

const SHAPES: Shape[] = [
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

function columnsOf(s: Shape): string[] {
  const keys = s.key.map(([c]) => c);
  return [...keys, ...['createdAt', 'Tenant'].filter((c) => !keys.includes(c))];
}

beforeAll(async () => {
  for (const s of SHAPES) {
    const keys = s.key.map(([c]) => q(c)).join(', ');
    const extra = [
      ['createdAt', 'timestamptz NOT NULL'],
      ['Tenant', 'text NOT NULL'],
    ].filter(([c]) => !s.key.some(([k]) => k === c));
    const cols = [...s.key.map(([c, t]) => `${q(c)} ${t} NOT NULL`), ...extra.map(([c, t]) => `${q(c)} ${t}`), '"Amount" bigint NOT NULL'].join(', ');
    const source = `public.${q(s.name)}`;
    const target = `public.${q(`${s.name}Out`)}`;
    const values: Record<string, string> = { createdAt: "timestamptz '2024-01-01' + g * interval '61 minutes'", Tenant: "'t' || (g % 4)" };
    s.key.forEach(([c], i) => (values[c] = s.values[i]));
    await env.db.pool.query(
      `CREATE TABLE ${source} (${cols}, PRIMARY KEY (${keys}))${s.partitioned ? ` PARTITION BY ${s.partitioned.by}` : ''};
       ${(s.partitioned?.leaves ?? []).map((leaf, i) => `CREATE TABLE public.${q(`${s.name}_${i}`)} PARTITION OF ${source} ${leaf};`).join('\n')}
       INSERT INTO ${source} (${columnsOf(s).map(q).join(', ')}, "Amount")
         SELECT ${columnsOf(s)
           .map((c) => values[c])
           .join(', ')}, g * 3 FROM generate_series(1, ${ROWS}) g;
       CREATE INDEX ON ${source} ("createdAt", ${keys});
       CREATE TABLE ${target} (${s.key.map(([c, t]) => `${q(c)} ${t.replace(/ COLLATE .*/, '')} NOT NULL`).join(', ')}, "Doubled" bigint NOT NULL, PRIMARY KEY (${keys}))${
         s.partitionedTarget
           ? ` PARTITION BY HASH (${q(s.key[0][0])}); CREATE TABLE public.${q(`${s.name}Out_0`)} PARTITION OF ${target} FOR VALUES WITH (MODULUS 2, REMAINDER 0); CREATE TABLE public.${q(`${s.name}Out_1`)} PARTITION OF ${target} FOR VALUES WITH (MODULUS 2, REMAINDER 1)`
           : ''
       };
       ANALYZE ${source};`,
    );
  }
});

function specOf(s: Shape): SpecInput {
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
  // text keys compared in the target's collation, as the run matched them
  const asTarget = s.key.map(([c, t]) => (t.startsWith('text') ? `${q(c)} COLLATE "default" AS ${q(c)}` : q(c))).join(', ');
  const { rows } = await env.db.pool.query(`
    WITH expected AS (SELECT ${asTarget}, "Amount" * 2 AS "Doubled" FROM public.${q(s.name)})
    SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM public.${q(`${s.name}Out`)}) a)::int
         + (SELECT count(*) FROM (SELECT * FROM public.${q(`${s.name}Out`)} EXCEPT SELECT * FROM expected) b)::int AS n`);
  expect(rows[0].n).toBe(0);
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, first.runId))!)).clean).toBe(true);
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });
});
