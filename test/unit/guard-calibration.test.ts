/**
 * What `plan --measure-guards` concludes from a guard's readings before a run: where the
 * governor's pace settles with that share of soft readings, the advice when a threshold sits
 * under what the database reads now, and the commitMs thresholds it suggests.
 */
import { FULL_PACE, MIN_PACE, nextPace, settledPace } from '../../src/governor';
import { suggestCommitMs, summarizeGuard } from '../../src/preflight/guard-calibration';

describe('settledPace', () => {
  test('no soft reading: every partition writes all the time; every reading soft: the slowest pace', () => {
    expect(settledPace(0)).toEqual({ writing: 1, allWriting: 1 });
    expect(settledPace(1).writing).toBeCloseTo(MIN_PACE, 10);
    expect(settledPace(1).allWriting).toBe(0);
  });

  test('a tenth soft (a threshold at the quiet p90) keeps partitions writing, but rarely all at once', () => {
    const { writing, allWriting } = settledPace(0.1);
    expect(writing).toBeGreaterThan(0.95);
    expect(allWriting).toBeGreaterThan(0.25);
    expect(allWriting).toBeLessThan(0.45);
  });

  test('a third soft settles under half the time writing', () => {
    expect(settledPace(1 / 3).writing).toBeGreaterThan(0.4);
    expect(settledPace(1 / 3).writing).toBeLessThan(0.5);
  });

  test('the same share gives the same answer, and more soft readings never more writing', () => {
    expect(settledPace(0.25)).toEqual(settledPace(0.25));
    const shares = [0.05, 0.1, 0.2, 0.3, 0.5, 0.8];
    const writing = shares.map((s) => settledPace(s).writing);
    for (let i = 1; i < writing.length; i++) expect(writing[i]).toBeLessThanOrEqual(writing[i - 1]);
  });

  test('it is the governor itself: soft readings in a row from full pace leave one writer, then halve', () => {
    expect(nextPace(FULL_PACE, true)).toBe(1);
    expect(nextPace(1, true)).toBe(0.5);
  });
});

describe('summarizeGuard', () => {
  test('a soft threshold under the quiet readings is named, with the share of time the run would write and the p90 to set', () => {
    const m = summarizeGuard('commitMs', [1.1, 1.2, 1.3, 1.2, 1.4, 1.25, 1.15, 1.35, 1.3, 2.5], { soft: 0.5, hard: 40 });
    expect(m).toMatchObject({ guard: 'commitMs', readings: 10, p50: 1.3, p90: 2.5, max: 2.5, overSoft: 10, overHard: 0, writing: 0.13, allWriting: 0 });
    expect(m.advice).toMatch(/commitMs read over soft 0.5 in 10 of 10 readings before the run wrote anything/);
    expect(m.advice).toMatch(/one partition at a time, about 13 % of the time/);
    expect(m.advice).toMatch(/set soft at or above the quiet p90 \(2.5\)/);
  });

  test('a threshold the quiet readings rarely pass says nothing at concurrency 1', () => {
    const m = summarizeGuard('commitMs', [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3], { soft: 2, hard: 40 });
    expect(m.overSoft).toBe(1);
    expect(m.writing).toBeGreaterThan(0.9);
    expect(m.advice).toBeUndefined();
  });

  test('at higher concurrency, soft readings a tenth of the time say that the partitions would rarely write at once', () => {
    const values = [...Array(27).fill(1), 3, 3, 3];
    const m = summarizeGuard('commitMs', values, { soft: 2, hard: 40 }, 4);
    expect(m.writing).toBeGreaterThan(0.9);
    expect(m.advice).toMatch(/its 4 partitions would write at once only about \d+ % of the time/);
    expect(m.advice).toMatch(/set soft at or above the quiet p95 \(3\), or limits.concurrency 1/);
  });

  test("a guard's SQL and name stay out of its summary: only its thresholds are carried", () => {
    const m = summarizeGuard('queue', [1, 2], { soft: 10, hard: 20, sql: 'SELECT 1', name: 'queue' } as never);
    expect(Object.keys(m).sort()).toEqual(['allWriting', 'guard', 'hard', 'max', 'overHard', 'overSoft', 'p50', 'p90', 'p95', 'readings', 'soft', 'writing']);
  });

  test('a reading over hard says the run would hold, and is not counted as soft', () => {
    const m = summarizeGuard('queue-depth', [5, 5, 500], { soft: 10, hard: 100 });
    expect(m).toMatchObject({ overSoft: 0, overHard: 1 });
    expect(m.advice).toMatch(/queue-depth read over hard 100 in 1 of 3 readings .* the run would hold/);
  });

  test('a guard measured without thresholds (commitMs for a spec without it) gives figures only', () => {
    const m = summarizeGuard('commitMs', [0.81234, 0.9, 1.04567], {}, 4);
    expect(m).toMatchObject({ p50: 0.9, max: 1.05, overSoft: 0, overHard: 0, writing: 1, allWriting: 1 });
    expect(m.advice).toBeUndefined();
  });
});

test('suggestCommitMs: soft at the quiet p90 for one partition at a time, the p95 for more, hard twenty times it, never zero', () => {
  expect(suggestCommitMs({ p90: 1.437, p95: 2.2 }, 1)).toEqual({ soft: 1.44, hard: 28.8 });
  expect(suggestCommitMs({ p90: 1.437, p95: 2.2 }, 2)).toEqual({ soft: 2.2, hard: 44 });
  expect(suggestCommitMs({ p90: 0.0004, p95: 0.0005 }, 1)).toEqual({ soft: 0.1, hard: 2 });
});

test('the suggestion for several partitions does not set off the warning it would give on a plan made with it', () => {
  const quiet = Array.from({ length: 30 }, (_, i) => 1 + i / 10);
  const suggested = suggestCommitMs(summarizeGuard('commitMs', quiet, {}), 4);
  expect(summarizeGuard('commitMs', quiet, suggested, 4).advice).toBeUndefined();
});
