import { progress } from '../../src/workflows/progress';
import * as gates from '../../src/workflows/gate-state';
import * as run from '../../src/workflows/run-state';
import * as control from '../../src/workflows/control-state';
import type { PartitionReport } from '../../src/domain/types';

const limits = { chunkSize: 1000, concurrency: 2 };
const started = run.opened(run.initialRunState(limits, '2026-11-30T12:00:00.000Z'), { partitionsTotal: 4, firstPage: [] }, false);
const alice = { actor: 'alice', reason: 'replica lag' };
const report = (partitionId: string, status: PartitionReport['status'], rows = 10): PartitionReport => ({
  partitionId,
  status,
  rowsRead: rows,
  rowsWritten: rows - 1,
  rowsUnchanged: 1,
  chunks: 1,
  ...(status === 'failed' ? { error: `partition ${partitionId} failed at id in [0, 10): boom` } : {}),
});
const withInFlight = (...ids: string[]) => ids.reduce((s, id, i) => run.launched(s, { id, ordinal: i }), started);

describe('partition reports and conditions', () => {
  test.each([
    [
      'a success counts once and adds its rows',
      withInFlight('a', 'b'),
      report('a', 'succeeded'),
      { inFlight: ['b'], counts: { succeeded: 1, failed: 0, cancelled: 0 }, finished: { rowsRead: 10, rowsWritten: 9, rowsUnchanged: 1 } },
    ],
    [
      'a failure records the last error',
      withInFlight('a'),
      report('a', 'failed'),
      { inFlight: [], counts: { succeeded: 0, failed: 1, cancelled: 0 }, lastError: 'partition a failed at id in [0, 10): boom' },
    ],
    ['a cancelled partition counts as cancelled', withInFlight('a'), report('a', 'cancelled'), { counts: { succeeded: 0, failed: 0, cancelled: 1 } }],
    [
      'a duplicate report is ignored',
      run.applyReport(withInFlight('a'), report('a', 'succeeded')),
      report('a', 'succeeded'),
      { counts: { succeeded: 1, failed: 0, cancelled: 0 }, finished: { rowsRead: 10, rowsWritten: 9, rowsUnchanged: 1 } },
    ],
    [
      'a report for a partition never started is ignored',
      withInFlight('a'),
      report('zzz', 'succeeded'),
      { inFlight: ['a'], counts: { succeeded: 0, failed: 0, cancelled: 0 } },
    ],
  ] as const)('%s', (_title, s, r, expected) => {
    expect(run.applyReport(s, r)).toMatchObject(expected);
  });

  const held = { partitionId: 'a', state: 'held' as const, reason: 'held by probeMs 312.40 > hard 200', since: '2026-11-30T12:00:01.000Z' };
  test('a condition shows while the partition is in flight, clears on writing, and goes with its report', () => {
    let s = run.applyCondition(withInFlight('a'), held);
    expect(progress(s, { runId: 'r1', name: 'n' }, Date.parse('2026-11-30T12:01:00Z')).conditions).toEqual([held]);
    expect(run.applyCondition(s, { ...held, state: 'writing', reason: null }).conditions).toEqual({});
    s = run.applyReport(s, report('a', 'succeeded'));
    expect(s.conditions).toEqual({});
  });

  test('a late condition from a finished partition does not resurrect it', () => {
    const s = run.applyReport(withInFlight('a'), report('a', 'succeeded'));
    expect(run.applyCondition(s, held)).toBe(s);
  });
});

describe('a report that comes before its partition is launched (the workflow task that launched it was lost with its worker)', () => {
  const rules = { attempt: 1 };

  test('it is kept, and settles the partition when the run launches it again: nothing left in flight to wait for', () => {
    // the replayed task applies the signal first: the partition is not in flight yet
    const early = run.applyReport(withInFlight('a'), { ...report('b', 'succeeded'), runAttempt: 1 }, rules);
    expect(early).toMatchObject({ inFlight: ['a'], counts: { succeeded: 0, failed: 0, cancelled: 0 } });
    const relaunched = run.launched(early, { id: 'b', ordinal: 1 });
    expect(relaunched).toMatchObject({ inFlight: ['a'], nextOrdinal: 2, counts: { succeeded: 1, failed: 0, cancelled: 0 }, early: [] });
    expect(relaunched.finished.rowsRead).toBe(10);
    // the partition's own second report, sent by a later attempt of its activity, counts nothing twice
    expect(run.applyReport(relaunched, report('b', 'succeeded'), rules).counts.succeeded).toBe(1);
  });

  test('executions recorded before it drop the report as they always did', () => {
    const early = run.applyReport(withInFlight('a'), report('b', 'succeeded'));
    expect(early.early).toBeUndefined();
    expect(run.launched(early, { id: 'b', ordinal: 1 }).inFlight).toEqual(['a', 'b']);
  });

  test('a report of an earlier attempt of the run is stale: neither counted nor kept', () => {
    const retry = { attempt: 2 };
    const s = withInFlight('a');
    expect(run.applyReport(s, { ...report('a', 'failed'), runAttempt: 1 }, retry)).toBe(s);
    expect(run.applyReport(s, { ...report('b', 'failed'), runAttempt: 1 }, retry)).toBe(s);
    expect(run.applyReport(s, { ...report('a', 'succeeded'), runAttempt: 2 }, retry).counts.succeeded).toBe(1);
  });

  test("only finished partitions' reports are kept, one per partition, and duplicates of finished ones age out", () => {
    let s = withInFlight('a');
    s = run.applyReport(s, { ...report('x', 'running' as PartitionReport['status']) }, rules);
    expect(s.early ?? []).toEqual([]);
    s = run.applyReport(s, report('b', 'failed'), rules);
    s = run.applyReport(s, report('b', 'succeeded'), rules);
    expect(s.early!.map((r) => [r.partitionId, r.status])).toEqual([['b', 'succeeded']]);
    for (let i = 0; i < 100; i++) s = run.applyReport(s, report(`dup-${i}`, 'succeeded'), rules);
    expect(s.early).toHaveLength(64);
    expect(s.early!.some((r) => r.partitionId === 'b')).toBe(false);
  });

  test("the canary's launch settles an early report the same way", () => {
    const canary = { ...withInFlight(), canary: { partitions: ['c'], launched: 0, phase: 'running' as const } };
    const early = run.applyReport(canary, report('c', 'succeeded'), rules);
    const next = gates.canaryLaunched(early);
    expect(next.s).toMatchObject({ inFlight: [], counts: { succeeded: 1, failed: 0, cancelled: 0 }, canary: { launched: 1 } });
  });
});

describe('the sliding window', () => {
  test.each([
    ['room in the window and plan left', withInFlight('a'), true, true, false],
    ['the window is full', withInFlight('a', 'b'), true, false, false],
    ['nothing left to plan, one in flight', withInFlight('a'), false, false, false],
    ['nothing left and nothing in flight: finished', started, false, false, true],
    ['paused: no launch', control.pause(started, alice, 'k'), true, false, false],
    ['cancelling with nothing in flight: finished although plan is left', control.requestCancel(started, alice, 'k'), true, false, true],
  ])('%s', (_title, s, planLeft, canLaunch, finished) => {
    expect(run.canLaunch(s, planLeft)).toBe(canLaunch);
    expect(run.isFinished(s, planLeft)).toBe(finished);
  });

  test('a failed launch leaves the in-flight set', () => {
    expect(run.launchFailed(withInFlight('a', 'b'), 'a').inFlight).toEqual(['b']);
  });

  test('a retry attempt continues from the ledger: counts, rows and its control version', () => {
    const pausedEarly = control.pause(run.initialRunState(limits, '2026-11-30T12:00:00.000Z'), alice, 'k');
    const s = run.opened(
      pausedEarly,
      { partitionsTotal: 9, firstPage: [], succeeded: 6, finished: { rowsRead: 60, rowsWritten: 50, rowsUnchanged: 10 }, controlVersion: 7 },
      true,
    );
    expect(s).toMatchObject({
      status: 'running',
      partitionsTotal: 9,
      counts: { succeeded: 6, failed: 0, cancelled: 0 },
      finished: { rowsRead: 60, rowsWritten: 50, rowsUnchanged: 10 },
      controlVersion: 8,
      syncedVersion: 7,
    });
    expect(control.isDirty(s)).toBe(true);
  });
});

test('progress: pending excludes done and in-flight partitions; rate and ETA come from finished ones', () => {
  const s = run.applyReport(withInFlight('a', 'b'), report('a', 'succeeded', 600));
  const p = progress(s, { runId: 'r1', name: 'n' }, Date.parse('2026-11-30T12:01:00Z'));
  expect(p.partitions).toEqual({ total: 4, pending: 2, running: 1, succeeded: 1, failed: 0, cancelled: 0 });
  expect(p.rowsPerSecond).toBe(10);
  expect(p.partitionsPerMinute).toBe(1);
  expect(p.etaSeconds).toBe(180);
});

describe('small partitions in groups', () => {
  const allowed = { groups: true, startsAlone: true, sqlTransform: true };
  const many = (rowsPlanned: number, partitionsTotal = 100) =>
    run.opened(run.initialRunState({ chunkSize: 1000, concurrency: 20 }, '2026-11-30T12:00:00.000Z'), { partitionsTotal, rowsPlanned, firstPage: [] }, false);

  test.each([
    ['small partitions of a run of many: as many as may start, up to ten', many(100_000), 20, 10],
    ['fewer slots free than ten: the slots', many(100_000), 3, 3],
    ['one slot: alone', many(100_000), 1, 1],
    ['partitions of more than two chunks on average: alone', many(300_000), 20, 1],
    ['a run of fewer than 40 partitions: alone', many(30_000, 30), 20, 1],
    ['rows not planned: alone', run.opened(run.initialRunState(limits, '2026-11-30T12:00:00.000Z'), { partitionsTotal: 100, firstPage: [] }, false), 20, 1],
  ])('%s', (_title, s, free, expected) => {
    expect(run.groupSize(s, free, allowed)).toBe(expected);
  });

  test.each([
    ['an execution recorded before groups', { ...allowed, groups: false }],
    ['partitions started as children of the run (no local first attempt)', { ...allowed, startsAlone: false }],
    ["a module transform (it runs in the worker's module host)", { ...allowed, sqlTransform: false }],
  ])('%s: alone, however many and small', (_title, flags) => {
    expect(run.groupSize(many(100_000), 20, flags)).toBe(1);
  });

  test("a member's report or failed launch forgets its group; reconciliation asks the group about the others", () => {
    let s = withInFlight('a', 'b', 'c');
    s = run.groupLaunched(s, ['a', 'b', 'c'], 'run/group/a+3-x');
    expect(s.groups).toEqual({ a: 'run/group/a+3-x', b: 'run/group/a+3-x', c: 'run/group/a+3-x' });
    s = run.applyReport(s, report('a', 'succeeded'));
    s = run.launchFailed(s, 'b');
    expect(s.groups).toEqual({ c: 'run/group/a+3-x' });
    expect(s.inFlight).toEqual(['c']);
    // a second report of a finished member changes nothing
    expect(run.applyReport(s, report('a', 'succeeded'))).toBe(s);
  });
});
