import type { RunTiming } from '../../src/ledger/run-timings';
import { paceFactor, paceFrom, REFERENCE_PACE } from '../../src/operations/orchestration-pace';

const at = new Date('2026-12-01T00:00:00Z');

/** A run as the projection's own model would have it take, k times the reference. */
function modelRun(k: number, partitions: number, concurrency: number, chunkMs: number, finishedAt = at): RunTiming {
  const slots = Math.min(concurrency, partitions);
  const spanMs = Math.max(partitions * REFERENCE_PACE.msPerPartition * k, (partitions * REFERENCE_PACE.slotMs * k + chunkMs) / slots);
  return { runId: `r-${k}-${partitions}`, finishedAt, partitions, concurrency, spanMs, chunkMs };
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
  const heavy: RunTiming = { runId: 'heavy', finishedAt: at, partitions: 16, concurrency: 4, spanMs: 10_000, chunkMs: 39_000 };
  expect(paceFactor(heavy)).toBeUndefined();
  expect(paceFrom([heavy])).toBe(REFERENCE_PACE);
});

test("the pace is the median of the recent runs' factors, and names how many and the newest", () => {
  const newest = new Date('2026-12-03T00:00:00Z');
  const pace = paceFrom([modelRun(2, 365, 6, 4_000, newest), modelRun(9, 40, 4, 0), modelRun(2.4, 91, 6, 20_000)]);
  expect(pace.basis).toEqual({ kind: 'measured', factor: expect.closeTo(2.4, 6), runs: 3, newest });
  expect(pace.slotMs).toBeCloseTo(REFERENCE_PACE.slotMs * 2.4);
  expect(pace.msPerPartition).toBeCloseTo(REFERENCE_PACE.msPerPartition * 2.4);
  const even = paceFrom([modelRun(2, 365, 6, 0), modelRun(3, 365, 6, 0)]);
  expect(even.basis.kind === 'measured' && even.basis.factor).toBeCloseTo(2.5);
});

test('no history: the reference', () => {
  expect(paceFrom([])).toBe(REFERENCE_PACE);
});
