import { checkAfterSql, checkInvariantSql, loadSqlParser } from '../../src/preflight/spec-sql';
import { canaryOrdinals, emptyTally, finalSampleEvery, mergeTallies, type GateTally } from '../../src/gates/gate-checks';
import * as gates from '../../src/workflows/gate-state';
import { progress } from '../../src/workflows/progress';
import * as run from '../../src/workflows/run-state';
import * as control from '../../src/workflows/control-state';

beforeAll(() => loadSqlParser());

describe('canaryOrdinals: first, last and evenly spaced, deterministic', () => {
  test.each([
    [10, 3, [0, 5, 9]],
    [10, 1, [0]],
    [1, 5, [0]],
    [4, 10, [0, 1, 2, 3]],
    [91, 4, [0, 30, 60, 90]],
    [200, '5%', [0, 22, 44, 66, 88, 111, 133, 155, 177, 199]],
    [3, '1%', [0]],
  ] as [number, number | string, number[]][])('%d partitions, canary %s', (total, count, expected) => {
    expect(canaryOrdinals(total, count)).toEqual(expected);
  });
});

test('finalCheck: sample keeps 1 key in 16 by default, all every key, off none', () => {
  expect(finalSampleEvery(undefined)).toBe(16);
  expect(finalSampleEvery({ finalCheck: 'all' })).toBe(1);
  expect(finalSampleEvery({ finalCheck: 'off' })).toBe(0);
});

test("the whole-run check's lanes add up to what one pass over their partitions counts", () => {
  const lane = (gates: GateTally['gates'], failures: string[], partitionsChecked: number): GateTally => ({
    gates,
    failures,
    failureCount: failures.length,
    partitionsChecked,
  });
  const many = Array.from({ length: 8 }, (_, i) => `compare: partition p${i}: 1 of 10 recomputed row(s) do not match the target (1 differ)`);
  const merged = mergeTallies([
    lane({ compare: { rowsChecked: 100, violations: 1 }, 'invariant:positive': { rowsChecked: 0, violations: 0 } }, many.slice(0, 1), 3),
    lane({ compare: { rowsChecked: 50, violations: 8 } }, many, 2),
    emptyTally(),
  ]);
  expect(merged.gates).toEqual({ compare: { rowsChecked: 150, violations: 9 }, 'invariant:positive': { rowsChecked: 0, violations: 0 } });
  // every failure counted; the lines kept to ten, as one pass keeps them
  expect(merged.failureCount).toBe(9);
  expect(merged.failures).toEqual([...many.slice(0, 1), ...many.slice(0, 8)].slice(0, 10));
  expect(merged.partitionsChecked).toBe(5);
  expect(mergeTallies([])).toEqual(emptyTally());
});

describe('invariant SQL: one read-only SELECT', () => {
  test.each([
    ['SELECT id FROM source_rows WHERE x IS NULL', undefined],
    ['DELETE FROM app.t', /must be a SELECT returning the rows that break the invariant \(found DELETE\)/],
    ['SELECT 1; DROP TABLE app.t', /exactly one statement/],
    ['WITH d AS (DELETE FROM app.t RETURNING *) SELECT * FROM d', /data-modifying WITH/],
    ['SELECT * INTO app.copy FROM source_rows', /SELECT … INTO/],
    ['SELECT * FROM source_rows FOR UPDATE', /locks rows/],
  ])('%s', (sql, problem) => {
    const verdict = checkInvariantSql(sql);
    if (!problem) expect(verdict.ok).toBe(true);
    else expect(verdict.ok ? '' : verdict.message).toMatch(problem);
  });
});

describe('after sql: one statement that changes data, never DDL, roles or settings', () => {
  test.each([
    ['INSERT INTO app.log SELECT now()', undefined],
    ['REFRESH MATERIALIZED VIEW app.daily', undefined],
    ['SELECT app.rebuild_cache()', undefined],
    ['DROP TABLE app.orders', /found DROP/],
    ['GRANT ALL ON app.orders TO public', /found GRANT/],
    ['SET ROLE postgres', /found VARIABLE SET/],
    ["COPY app.orders TO PROGRAM 'sh'", /found COPY/],
    ['COMMIT', /found TRANSACTION/],
    ['UPDATE app.a SET x = 1; UPDATE app.b SET y = 2', /exactly one statement \(found 2\)/],
    ['SELECT * INTO app.copy FROM app.orders', /SELECT … INTO/],
    ["UPDATE backfill.runs SET status = 'succeeded'", /touches the ledger \(backfill\.runs\)/],
    ['DELETE FROM app.log WHERE id IN (SELECT 1 FROM backfill.gate_results)', /touches the ledger \(backfill\.gate_results\)/],
  ])('%s', (sql, problem) => {
    const verdict = checkAfterSql(sql);
    if (!problem) expect(verdict.ok).toBe(true);
    else expect(verdict.ok ? '' : verdict.message).toMatch(problem);
  });
});

describe('the canary in the run state', () => {
  const limits = { chunkSize: 1000, concurrency: 2 };
  const opened = () => gates.canaryPicked({ ...run.initialRunState(limits, '2026-01-01T00:00:00Z'), status: 'running' }, ['a', 'b', 'c']);
  const verdict = (passed: boolean) => ({
    passed,
    failures: passed ? [] : ['invariant x: partition a: 3 violating row(s)'],
    failureCount: passed ? 0 : 1,
    partitionsChecked: 3,
  });

  test('launches its partitions within the concurrency limit, and is finished when all reported', () => {
    let s = opened();
    const launched: string[] = [];
    while (gates.canaryCanLaunch(s)) {
      const next = gates.canaryLaunched(s);
      s = next.s;
      launched.push(next.id);
    }
    expect(launched).toEqual(['a', 'b']);
    expect(s.nextOrdinal).toBe(0); // the run's own paging is untouched
    s = run.applyReport(s, { partitionId: 'a', status: 'succeeded', rowsRead: 1, rowsWritten: 1, rowsUnchanged: 0, chunks: 1 });
    expect(gates.canaryFinished(s)).toBe(false);
    s = gates.canaryLaunched(s).s;
    s = run.applyReport(s, { partitionId: 'b', status: 'succeeded', rowsRead: 1, rowsWritten: 1, rowsUnchanged: 0, chunks: 1 });
    s = run.applyReport(s, { partitionId: 'c', status: 'succeeded', rowsRead: 1, rowsWritten: 1, rowsUnchanged: 0, chunks: 1 });
    expect(gates.canaryFinished(s)).toBe(true);
  });

  test('a failed canary holds the run; resume does not lift it, approve does, and records who', () => {
    let s = gates.canaryJudged(opened(), verdict(false), false, 'r1', 'k1');
    expect(s.canary!.phase).toBe('held');
    expect(s.paused).toBe(true);
    expect(s.heldBy!.reason).toMatch(
      /the canary failed \(1 problem\(s\): invariant x: partition a: 3 violating row\(s\)\); nothing beyond its 3 partition\(s\) was written/,
    );
    expect(control.resume(s, { actor: 'bob' }, 'k2')).toBe(s);
    expect(gates.approveRefusal(s, 'r1')).toBeUndefined();
    s = gates.approve(s, { actor: 'alice', reason: 'checked' }, 'k3');
    expect(s).toMatchObject({ paused: false, heldBy: undefined, canary: { phase: 'approved', approvedBy: { actor: 'alice', reason: 'checked' } } });
    expect(s.pendingEvents.map((e) => e.kind)).toEqual(['canary-failed', 'approved']);
    expect(gates.approveRefusal(s, 'r1')).toMatch(/not waiting for approval \(its canary is approved\)/);
  });

  test('a passing canary expands at once, or holds for approval when the spec asks', () => {
    expect(gates.canaryJudged(opened(), verdict(true), false, 'r1', 'k').canary!.phase).toBe('passed');
    const held = gates.canaryJudged(opened(), verdict(true), true, 'r1', 'k');
    expect(held).toMatchObject({ paused: true, canary: { phase: 'held' } });
    expect(progress(held, { runId: 'r1', name: 'n' }, Date.now()).canary!.held).toMatch(/waiting for approval: backfill approve r1 --reason/);
  });

  test('a partition the canary started is passed over by the plan: the run counts it once', () => {
    let s = gates.canaryLaunched(opened()).s;
    expect(gates.ranInCanary(s, 'a')).toBe(true);
    expect(gates.ranInCanary(s, 'b')).toBe(false); // picked, not yet started: the plan may still meet it first
    expect(gates.ranInCanary(run.initialRunState(limits, '2026-01-01T00:00:00Z'), 'a')).toBe(false);
    s = run.passedOver(s, { id: 'a', ordinal: 7 });
    expect(s.nextOrdinal).toBe(8);
    expect(s.inFlight).toEqual(['a']); // only the canary's launch
  });

  test('approve is refused on a run without a canary', () => {
    expect(gates.approveRefusal(run.initialRunState(limits, '2026-01-01T00:00:00Z'), 'r1')).toMatch(/has no canary/);
  });
});

describe('ramp stages', () => {
  const limits = { chunkSize: 1000, concurrency: 2 };
  test.each([
    [10, ['30%', '60%'], [3, 6]],
    [10, ['100%'], []],
    [3, ['10%', '20%'], [1]],
    [1000, ['50%', '1%', '10%'], [10, 100, 500]],
  ] as [number, string[], number[]][])('%d partitions, %j -> %j', (total, shares, cutoffs) => {
    expect(gates.rampCutoffs(total, shares)).toEqual(cutoffs);
  });

  test('a stage finishes when its partitions reported and the next lies beyond it; a failed stage holds until approved, which opens the next', () => {
    let s = gates.rampStarted({ ...run.initialRunState(limits, '2026-01-01T00:00:00Z'), status: 'running', partitionsTotal: 10 }, [3, 6]);
    expect(gates.rampCutoff(s)).toBe(3);
    expect(gates.rampStageFinished(s, 2)).toBe(false);
    expect(gates.rampStageFinished(s, 3)).toBe(true);
    s = gates.rampJudged(s, { passed: true, failures: [], failureCount: 0, partitionsChecked: 3 }, 'r1', 'k1');
    expect(gates.rampCutoff(s)).toBe(6);
    s = gates.rampJudged(s, { passed: false, failures: ['partition p5 failed'], failureCount: 1, partitionsChecked: 3 }, 'r1', 'k2');
    expect(s).toMatchObject({ paused: true, ramp: { phase: 'held', stage: 1 } });
    expect(control.resume(s, { actor: 'x' }, 'k3')).toBe(s);
    expect(gates.approveRefusal(s, 'r1')).toBeUndefined();
    s = gates.approve(s, { actor: 'alice', reason: 'ok' }, 'k4');
    expect(s).toMatchObject({ paused: false, ramp: { phase: 'running', stage: 2 } });
    expect(gates.rampCutoff(s)).toBe(Infinity);
    expect(s.pendingEvents.map((e) => e.kind)).toEqual(['stage-passed', 'stage-failed', 'approved']);
  });
});
