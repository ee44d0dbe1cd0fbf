/**
 * limits.splitTail: a slot with no partition left to start takes half of a running one. Runs
 * on shapes unlike the demo's (one bigint partition cut again and again, a uuid key in one time
 * partition, a partitioned source with a composite (ICU text, bigint) key): the ledger shows the
 * cuts, every source row is read exactly once across the parts, the target is exact, `verify` is
 * clean, the completeness proof holds, and a re-run writes nothing.
 */
import { statusReportFor, verifyRun, waitForResult } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import { getRun } from '../src/ledger/runs';
import { stalePartitions } from '../src/ledger/stale';
import type { SpecInput } from '../src/specs/schema';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { writeSpec } from './helpers/orders';
import { createShapeTables, q, targetDifferences, type TableShape } from './helpers/table-shapes';

const env = useTestEnvironment('split_tail', { rows: 0 });
const ROWS = 3000;

const SHAPES: TableShape[] = [
  // one partition for every row: a free slot at once, cut after cut until every slot is busy
  { name: 'OneRange', key: [['id', 'bigint']], values: ['g * 3'], partition: { by: 'range', column: 'id', size: 1_000_000_000 } },
  { name: 'UuidYear', key: [['id', 'uuid']], values: ['md5(g::text)::uuid'], partition: { by: 'time', column: 'createdAt', size: '6 months' } },
  {
    name: 'TenantLeaves',
    key: [
      ['Tenant', 'text COLLATE "en-US-x-icu"'],
      ['id', 'bigint'],
    ],
    values: ["(ARRAY['t0', 'ß2', 't0', 'ß2', 't0', 'ß2', 't0', 'ß2', 'T1', 't3'])[1 + g % 10]", 'g'],
    partition: { by: 'native', column: 'Tenant' },
    // one leaf of 80 % of the rows, two of 10 %: those two end long before it, and their slots take parts of it
    partitioned: { by: 'LIST ("Tenant")', leaves: ["FOR VALUES IN ('t0', 'ß2')", "FOR VALUES IN ('T1')", 'DEFAULT'] },
  },
];

beforeAll(() => createShapeTables(env.db.pool, SHAPES, ROWS));

function specOf(s: TableShape): SpecInput {
  const keys = s.key.map(([c]) => c);
  return {
    name: `split-${s.name.toLowerCase()}`,
    reason: 'test: splitting the tail',
    database: env.db.envVar,
    source: { table: `public.${s.name}`, key: keys.length === 1 ? keys[0] : keys },
    partition: s.partition,
    // 20 ms more per chunk, so the big leaf is still running when the small ones end, however busy the machine
    transform: {
      name: 'double',
      version: 1,
      sql: `SELECT ${keys.map((k) => `c.${q(k)}`).join(', ')}, c."Amount" * 2 AS "Doubled" FROM chunk c, pg_sleep(0.02)`,
      allowVolatile: true,
    },
    target: { table: `public.${s.name}Out`, key: keys, mode: 'upsert' },
    limits: { chunkSize: 100, concurrency: 3, splitTail: true },
    validate: { finalCheck: 'all' },
  };
}

test.each(SHAPES.map((s) => [s.name, s] as const))('%s: cut while running, every row read once, exact, verified, re-run without a write', async (_, s) => {
  const spec = specOf(s);
  const first = await env.start(spec);
  expect(await waitForResult(first.handle)).toMatchObject({ status: 'succeeded', rowsWritten: ROWS });

  const { rows: parts } = await env.db.pool.query<{ partition_id: string; split_from: string | null; rows_read: string; status: string }>(
    'SELECT partition_id, split_from, rows_read, status FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal',
    [first.runId],
  );
  const cut = parts.filter((p) => p.split_from !== null);
  expect(cut.length).toBeGreaterThan(0);
  for (const p of cut) expect(p.partition_id).toMatch(/\+\d+$/);
  // every part read rows, and no row was read by two parts
  expect(parts.every((p) => p.status === 'succeeded' && Number(p.rows_read) > 0)).toBe(true);
  expect(parts.reduce((n, p) => n + Number(p.rows_read), 0)).toBe(ROWS);
  const { rows: events } = await env.db.pool.query<{ detail: { partition: string; piece: string } }>(
    "SELECT detail FROM backfill.run_events WHERE run_id = $1 AND kind = 'partition-split' ORDER BY id",
    [first.runId],
  );
  expect(events.map((e) => e.detail.piece).sort()).toEqual(cut.map((p) => p.partition_id).sort());
  // a chunk that met its cut is computed again, not counted as the application's change (nothing else writes here)
  const { rows: retried } = await env.db.pool.query('SELECT sum(concurrent_retries)::int AS n FROM backfill.partitions WHERE run_id = $1', [first.runId]);
  expect(retried[0].n).toBe(0);
  // and the operator is told of the cuts, not of an application's writes
  const shown = renderStatus(await statusReportFor(env.db.pool, first.runId));
  expect(shown).toContain(`${cut.length} of the partitions cut from running ones (limits.splitTail)`);
  expect(shown).not.toContain('computed again because the application changed');
  const { rows: finished } = await env.db.pool.query<{ detail: { proof: unknown } }>(
    "SELECT detail FROM backfill.run_events WHERE run_id = $1 AND kind = 'finished'",
    [first.runId],
  );
  expect(finished[0].detail.proof).toEqual({ planned: parts.length - cut.length, inLedger: parts.length, cutWhileRunning: cut.length, problems: [] });

  expect(await targetDifferences(env.db.pool, s)).toBe(0);
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, first.runId))!)).clean).toBe(true);
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: ROWS });

  // stale speaks of the plan's partitions: a cut one is written once all of its parts were
  expect(await stalePartitions(env.db.pool, spec.name, 1)).toEqual([]);
  const planned = parts.filter((p) => p.split_from === null).map((p) => p.partition_id);
  expect((await stalePartitions(env.db.pool, spec.name, 2)).map((p) => p.partitionId).sort()).toEqual([...planned].sort());
});

test("limits.splitTail with target.mode 'replace' is refused with the reason, before anything is written", async () => {
  const spec: SpecInput = { ...specOf(SHAPES[0]), target: { table: 'public.OneRangeOut', key: ['id'], mode: 'replace', partitionColumn: 'id' } };
  const plan = await runCli(['plan', writeSpec(spec)]);
  expect(plan.code).toBe(2);
  expect(plan.stderr).toContain('limits.splitTail');
  expect(plan.stderr).toContain("cannot be used with target.mode 'replace'");
});
