import type { RunTiming } from '../../src/ledger/run-timings';
import { describePace, paceFactor, paceFrom, REFERENCE_GROUPED_PACE, REFERENCE_PACE, referencePace } from '../../src/operations/orchestration-pace';

const at = new Date('2026-12-01T00:00:00Z');

/** A run as the projection's own model would have it take, k times the reference. */
function modelRun(k: number, partitions: number, concurrency: number, chunkMs: number, finishedAt = at, grouped = false): RunTiming {
  const slots = Math.min(concurrency, partitions);
  const reference = referencePace(grouped);
  const spanMs = Math.max(partitions * reference.msPerPartition * k, (partitions * reference.slotMs * k + chunkMs) / slots);
  return { runId: `r-${k}-${partitions}`, finishedAt, partitions, concurrency, spanMs, chunkMs, grouped };
}

test('a run the model describes gives back its factor, whether its slots or the server set its pace', () => {
  // 365 day partitions at concurrency 6: the slots bind
  expect(paceFactor(modelRun(2.1, 365, 6, 5_000))).toBeCloseTo(2.1);
  // 1,000 one-row partitions at concurrency 20: the server's pace binds
  expect(paceFactor(modelRun(1.7, 1_000, 20, 200))).toBeCloseTo(1.7);
  expect(paceFactor(modelRun(0.6, 100, 4, 0))).toBeCloseTo(0.6);
});

test("a run spent in its chunks says too little about Temporal's part to measure it", () => {
  // 8 partitions of 250,000 rows: a sliver of the slots' time outside the chunks
  const heavy: RunTiming = { runId: 'heavy', finishedAt: at, partitions: 16, concurrency: 4, spanMs: 10_000, chunkMs: 39_000, grouped: false };
  expect(paceFactor(heavy)).toBeUndefined();
  expect(paceFrom([heavy], false)).toBe(REFERENCE_PACE);
});

test("the pace is the median of the recent runs' factors, and names how many and the newest", () => {
  const newest = new Date('2026-12-03T00:00:00Z');
  const pace = paceFrom([modelRun(2, 365, 6, 4_000, newest), modelRun(9, 40, 4, 0), modelRun(2.4, 91, 6, 20_000)], false);
  expect(pace.basis).toEqual({ kind: 'measured', factor: expect.closeTo(2.4, 6), runs: 3, newest });
  expect(pace.slotMs).toBeCloseTo(REFERENCE_PACE.slotMs * 2.4);
  expect(pace.msPerPartition).toBeCloseTo(REFERENCE_PACE.msPerPartition * 2.4);
  const even = paceFrom([modelRun(2, 365, 6, 0), modelRun(3, 365, 6, 0)], false);
  expect(even.basis.kind === 'measured' && even.basis.factor).toBeCloseTo(2.5);
});

test('no history: the reference of the planned kind', () => {
  expect(paceFrom([], false)).toBe(REFERENCE_PACE);
  expect(paceFrom([], true)).toBe(REFERENCE_GROUPED_PACE);
  // a group's partitions cost Temporal less each than a partition's own workflow does
  expect(REFERENCE_GROUPED_PACE.slotMs).toBeLessThan(REFERENCE_PACE.slotMs);
  expect(describePace(REFERENCE_GROUPED_PACE)).toContain('the partitions started in groups of up to 10');
  expect(describePace(REFERENCE_PACE)).not.toContain('groups');
  // Temporal's server on PostgreSQL persistence adds less to a group's partitions than to a partition's own workflow
  expect(describePace(REFERENCE_PACE)).toContain('a server on PostgreSQL persistence takes about twice that');
  expect(describePace(REFERENCE_GROUPED_PACE)).toContain('a server on PostgreSQL persistence takes up to about a quarter more');
});

test("a run is measured against the reference of its own kind, and the factor scales the planned run's kind", () => {
  // the same deployment, 1.8 × the reference, seen once grouped and once alone: the same factor
  expect(paceFactor(modelRun(1.8, 365, 6, 5_000, at, true))).toBeCloseTo(1.8);
  expect(paceFactor(modelRun(1.8, 365, 6, 5_000, at, false))).toBeCloseTo(1.8);
  const history = [modelRun(1.8, 365, 6, 5_000, at, true), modelRun(1.8, 30, 6, 5_000, at, false)];
  const grouped = paceFrom(history, true);
  expect(grouped).toMatchObject({ grouped: true, slotMs: expect.closeTo(REFERENCE_GROUPED_PACE.slotMs * 1.8, 6) });
  const alone = paceFrom(history, false);
  expect(alone).toMatchObject({ grouped: false, slotMs: expect.closeTo(REFERENCE_PACE.slotMs * 1.8, 6) });
});
