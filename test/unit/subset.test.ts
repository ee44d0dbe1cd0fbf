/** A subset of the plan (`start --partition`, `--from/--to`): whole partitions, said exactly, refused with reasons. */
import { selectSubset, type SubsetSelection } from '../../src/compiler/subset';
import type { PlannedPartition } from '../../src/domain/types';

const range = (n: number, size = 100): PlannedPartition[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `id:${String(i * size).padStart(9, '0')}-${String((i + 1) * size).padStart(9, '0')}`,
    ordinal: i,
    bounds: { kind: 'range', column: 'id', lo: String(i * size), hi: String((i + 1) * size) },
  }));

const days = (first: string, n: number, timeZone?: string): PlannedPartition[] =>
  Array.from({ length: n }, (_, i) => {
    const lo = new Date(Date.parse(first) + i * 86_400_000).toISOString();
    const hi = new Date(Date.parse(first) + (i + 1) * 86_400_000).toISOString();
    return { id: `day:${lo.slice(0, 10)}`, ordinal: i, bounds: { kind: 'time', column: 'created_at', lo, hi, ...(timeZone ? { timeZone } : {}) } };
  });

const chosen = (s: SubsetSelection) => (s.ok ? s.partitions.map((p) => [p.id, p.ordinal]) : s.problems);

test('--partition: the named partitions, in plan order, renumbered; each keeps its place in the plan for the proof', () => {
  const plan = range(10);
  const s = selectSubset(plan, { partitions: [plan[7].id, plan[2].id] });
  expect(chosen(s)).toEqual([
    [plan[2].id, 0],
    [plan[7].id, 1],
  ]);
  expect(s.ok && s.subset).toEqual({
    asked: { partitions: [plan[7].id, plan[2].id] },
    partitions: [
      { id: plan[2].id, planOrdinal: 2 },
      { id: plan[7].id, planOrdinal: 7 },
    ],
    ofPlanned: 10,
    lastBoundedPlace: 9,
  });
  // neighbours: one stretch, said as such
  expect(selectSubset(plan, { partitions: [plan[3].id, plan[4].id] })).toMatchObject({ ok: true, subset: { covers: { from: '300', to: '500' } } });
});

test('--partition of an id the plan does not hold is refused, naming where the plan runs', () => {
  const plan = range(3);
  expect(chosen(selectSubset(plan, { partitions: ['id:000000000-000000050'] }))).toEqual([
    '--partition id:000000000-000000050: not a partition of the plan (its 3 partitions run from id:000000000-000000100 to id:000000200-000000300; backfill plan lists them)',
  ]);
});

test('--from/--to on a range plan: the partitions that meet [from, to); wider than asked is said', () => {
  const plan = range(10);
  const exact = selectSubset(plan, { from: '200', to: '400' });
  expect(chosen(exact)).toEqual([
    [plan[2].id, 0],
    [plan[3].id, 1],
  ]);
  expect(exact.ok && exact.warnings).toEqual([]);
  const wider = selectSubset(plan, { from: '250', to: '401' });
  expect(chosen(wider).map((c) => (c as unknown[])[0])).toEqual([plan[2].id, plan[3].id, plan[4].id]);
  expect(wider.ok && wider.warnings[0]).toMatch(/covers \[200, 500\): wider than --from\/--to asked/);
  // open ends
  expect(chosen(selectSubset(plan, { from: '900' }))).toEqual([[plan[9].id, 0]]);
  expect(chosen(selectSubset(plan, { to: '100' }))).toEqual([[plan[0].id, 0]]);
});

test('--from/--to on a time plan: dates in the plan\u2019s time zone, timestamps with offsets as given', () => {
  const plan = days('2024-03-01T00:00:00.000Z', 10);
  expect(chosen(selectSubset(plan, { from: '2024-03-03', to: '2024-03-05' }))).toEqual([
    ['day:2024-03-03', 0],
    ['day:2024-03-04', 1],
  ]);
  expect(chosen(selectSubset(plan, { from: '2024-03-09T12:00:00+02:00' }))).toEqual([
    ['day:2024-03-09', 0],
    ['day:2024-03-10', 1],
  ]);
  // a New York plan: its days start at 05:00Z; a bare date is New York's midnight
  const ny = days('2024-03-01T05:00:00.000Z', 5, 'America/New_York');
  expect(chosen(selectSubset(ny, { from: '2024-03-02', to: '2024-03-03' })).map((c) => (c as unknown[])[0])).toEqual([ny[1].id]);
});

test('refused: both ways at once, an empty stretch, from not before to, words that are not bounds, --from/--to on a list plan', () => {
  const plan = range(5);
  expect(chosen(selectSubset(plan, { partitions: [plan[0].id], from: '0' }))).toEqual(['give --partition or --from/--to, not both: a subset is named one way']);
  expect(chosen(selectSubset(plan, { from: '900', to: '1000' }))).toEqual(['no partition of the plan meets [900, 1000): the plan covers [0, 500)']);
  expect(chosen(selectSubset(plan, { from: '300', to: '200' }))).toEqual(['--from 300 is not before --to 200']);
  expect(chosen(selectSubset(plan, { from: 'yesterday' }))).toEqual([
    "--from yesterday: not a whole number, and this plan's partitions are ranges of whole numbers",
  ]);
  expect(chosen(selectSubset(days('2024-03-01T00:00:00.000Z', 3), { to: 'soon' }))).toEqual([
    '--to soon: not a date or timestamp (e.g. 2024-03-01 or 2024-03-01T12:00:00Z)',
  ]);
  const list: PlannedPartition[] = ['eu', 'us'].map((value, i) => ({ id: `region#00${i + 1}`, ordinal: i, bounds: { kind: 'list', column: 'region', value } }));
  expect(chosen(selectSubset(list, { from: 'eu' }))).toEqual([
    "--from/--to select on a range or time plan's bounds; this plan's partitions are list: name them with --partition (backfill plan lists them)",
  ]);
});
