/**
 * Part of the plan on purpose (docs/operating.md "Run part of the plan"): `start --partition` with
 * partitions that are not neighbours, and `--from/--to` on a range plan and on a time plan of a
 * quoted, composite-key table. Each run writes exactly its partitions and nothing else, ends
 * succeeded with its proof of completeness over exactly its subset, and says "subset of …" in
 * status and the report; `plan` shows the same subset; a partition the plan does not hold is
 * refused with nothing written.
 */
import { listEvents } from '../src/ledger/events';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { createShapeTables, q, type TableShape } from './helpers/table-shapes';

const env = useTestEnvironment('subsets', { rows: 30_000 });
const cli = (...args: string[]) => runCli(args, { BACKFILL_TASK_QUEUE: env.worker.taskQueue });

const runRow = async (runId: string) =>
  (await env.db.pool.query('SELECT status, partitions_total, subset, rows_outside_plan FROM backfill.runs WHERE run_id = $1', [runId])).rows[0];
const latestRunId = async (name: string): Promise<string> =>
  (await env.db.pool.query('SELECT run_id FROM backfill.runs WHERE name = $1 ORDER BY created_at DESC LIMIT 1', [name])).rows[0].run_id;
const runCount = async () =>
  (await env.db.pool.query("SELECT to_regclass('backfill.runs') IS NULL AS none")).rows[0].none
    ? 0
    : Number((await env.db.pool.query('SELECT count(*) AS n FROM backfill.runs')).rows[0].n);

const SHAPE: TableShape = {
  name: 'Sales Events',
  key: [
    ['Tenant', 'text'],
    ['Seq', 'int'],
  ],
  values: ["'t' || (g % 4)", 'g'],
  partition: { by: 'time', column: 'createdAt', size: '1 day' },
};

beforeAll(() => createShapeTables(env.db.pool, [SHAPE], 1_500));

test('--partition: two partitions that are not neighbours, exactly, and nothing else; plan shows the same; an id the plan lacks is refused, nothing written', async () => {
  const specFile = writeSpec(
    ordersSpec(env.db.envVar, { name: 'subset-named', partition: { by: 'range', column: 'id', size: 10_000 }, limits: { chunkSize: 2_000, concurrency: 2 } }),
  );
  const planned = JSON.parse((await cli('plan', specFile, '-o', 'json')).stdout).partitions.map((p: { id: string }) => p.id) as string[];
  expect(planned.length).toBeGreaterThan(5);
  const [second, fifth] = [planned[1], planned[4]];

  const plan = await cli('plan', specFile, '--partition', fifth, second);
  expect(plan.code).toBe(0);
  expect(plan.stdout).toContain(`a subset: 2 of the plan's ${planned.length} partitions (--partition ${fifth} ${second}):\n  ${second}\n  ${fifth}`);

  const refused = await cli('start', specFile, '--partition', 'id:000000000-000000007');
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`--partition id:000000000-000000007: not a partition of the plan (its ${planned.length} partitions run from ${planned[0]}`);
  expect(await runCount()).toBe(0);

  const started = await cli('start', specFile, '--partition', second, fifth, '--wait');
  expect(started.code).toBe(0);
  const runId = await latestRunId('subset-named');
  expect(await runRow(runId)).toMatchObject({
    status: 'succeeded',
    partitions_total: 2,
    rows_outside_plan: null,
    subset: {
      asked: { partitions: [second, fifth] },
      partitions: [
        { id: second, planOrdinal: 1 },
        { id: fifth, planOrdinal: 4 },
      ],
      ofPlanned: planned.length,
    },
  });
  // exactly those two partitions' rows: right inside, none outside
  const inside = '(id >= 10000 AND id < 20000) OR (id >= 40000 AND id < 50000)';
  expect(await diffAgainstExpected(env.db.pool, inside)).toMatchObject({ missing: 0, extra: 0 });
  expect(Number((await env.db.pool.query(`SELECT count(*) AS n FROM app.orders_usd WHERE NOT (${inside})`)).rows[0].n)).toBe(0);
  // the proof covered exactly the subset
  const finished = (await listEvents(env.db.pool, runId)).find((e) => e.kind === 'finished')!;
  expect(finished.detail).toMatchObject({ status: 'succeeded', proof: { planned: 2, inLedger: 2, subsetOf: planned.length, problems: [] } });

  const status = await cli('status', runId, '--database', env.db.envVar);
  expect(status.stdout).toContain(`subset:    2 of the plan's ${planned.length} partitions (--partition ${second} ${fifth})`);
  const report = await cli('report', runId, '--database', env.db.envVar);
  expect(report.stdout).toContain(`a subset, 2 of the plan's ${planned.length} partitions`);
  await env.db.pool.query('TRUNCATE app.orders_usd');
});

test('--from/--to on a range plan: the partitions that meet the stretch, said wider than asked where it is; both ways at once refused', async () => {
  const specFile = writeSpec(
    ordersSpec(env.db.envVar, { name: 'subset-range', partition: { by: 'range', column: 'id', size: 10_000 }, limits: { chunkSize: 2_000, concurrency: 2 } }),
  );
  expect((await cli('start', specFile, '--from', '20000', '--partition', 'x')).stderr).toContain('give --partition or --from/--to, not both');
  const started = await cli('start', specFile, '--from', '25000', '--to', '45000', '--wait');
  expect(started.stderr).toContain('warning: the subset covers [20000, 50000): wider than --from/--to asked');
  expect(started.code).toBe(0);
  expect(await diffAgainstExpected(env.db.pool, 'id >= 20000 AND id < 50000')).toMatchObject({ missing: 0, extra: 0 });
  expect(Number((await env.db.pool.query('SELECT count(*) AS n FROM app.orders_usd WHERE id < 20000 OR id >= 50000')).rows[0].n)).toBe(0);
  await env.db.pool.query('TRUNCATE app.orders_usd');
});

test('--from/--to on a time plan of a quoted table with a composite key: three days, exactly', async () => {
  const keys = SHAPE.key.map(([c]) => c);
  const spec = {
    name: 'subset-days',
    reason: 'test: three days of a quoted table',
    database: env.db.envVar,
    source: { table: `public.${SHAPE.name}`, key: keys },
    partition: SHAPE.partition,
    transform: { name: 'double', version: 1, sql: `SELECT ${keys.map((k) => `c.${q(k)}`).join(', ')}, c."Amount" * 2 AS "Doubled" FROM chunk c` },
    target: { table: `public.${SHAPE.name}Out`, key: keys, mode: 'upsert' },
    limits: { chunkSize: 40, concurrency: 2 },
    validate: { finalCheck: 'all' },
  };
  const specFile = writeSpec(spec);
  const plan = JSON.parse((await cli('plan', specFile, '--from', '2024-01-10', '--to', '2024-01-13', '-o', 'json')).stdout);
  expect(plan.subset).toMatchObject({ covers: { from: '2024-01-10T00:00:00.000Z', to: '2024-01-13T00:00:00.000Z' } });
  expect(plan.partitions.map((p: { id: string }) => p.id)).toEqual(['day:2024-01-10', 'day:2024-01-11', 'day:2024-01-12']);
  const started = await cli('start', specFile, '--from', '2024-01-10', '--to', '2024-01-13', '--wait');
  expect(started.code).toBe(0);
  const runId = await latestRunId('subset-days');
  expect(await runRow(runId)).toMatchObject({ status: 'succeeded', partitions_total: 3 });
  const { rows } = await env.db.pool.query<{ wrong: number; outside: number; inside: number }>(`
    SELECT (SELECT count(*)::int FROM public.${q(`${SHAPE.name}Out`)} o JOIN public.${q(SHAPE.name)} s USING ("Tenant", "Seq") WHERE o."Doubled" <> s."Amount" * 2) AS wrong,
           (SELECT count(*)::int FROM public.${q(`${SHAPE.name}Out`)} o JOIN public.${q(SHAPE.name)} s USING ("Tenant", "Seq")
             WHERE s."createdAt" < '2024-01-10' OR s."createdAt" >= '2024-01-13') AS outside,
           (SELECT count(*)::int FROM public.${q(SHAPE.name)} s WHERE s."createdAt" >= '2024-01-10' AND s."createdAt" < '2024-01-13'
             AND NOT EXISTS (SELECT 1 FROM public.${q(`${SHAPE.name}Out`)} o WHERE (o."Tenant", o."Seq") = (s."Tenant", s."Seq"))) AS inside`);
  expect(rows[0]).toEqual({ wrong: 0, outside: 0, inside: 0 });
});
