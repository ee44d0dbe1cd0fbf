import { PLAN_FORMAT, planDifferences, summarizePartitions, type SavedPlan } from '../../src/preflight/saved-plan';
import { inputChanges, type InputFingerprint } from '../../src/preflight/input-fingerprints';

const fx: InputFingerprint = { name: 'app.fx', kind: 'table', definition: 'd1', rows: 4, content: 'c1' };
const fn: InputFingerprint = { name: 'app.rate_for(text)', kind: 'function', definition: 'f1' };
const big: InputFingerprint = {
  name: 'app.customers',
  kind: 'table',
  definition: 'd2',
  uncovered: 'about 2000000 rows, over the 100000 hashed at each partition',
};

describe('inputChanges', () => {
  test('nothing changed: no words', () => {
    expect(inputChanges([fx, fn, big], [fx, fn, { ...big, uncovered: 'about 2100000 rows, over the 100000 hashed at each partition' }])).toEqual([]);
  });
  test('each kind of change in one phrase', () => {
    expect(inputChanges([fx], [{ ...fx, content: 'c2' }])).toEqual(['table app.fx has rows with other values']);
    expect(inputChanges([fx], [{ ...fx, rows: 5, content: 'c2' }])).toEqual(['table app.fx has 5 rows, 4 when the run started']);
    expect(inputChanges([fx], [{ ...fx, rows: 5, content: 'c2' }], 'in the approved plan')).toEqual(['table app.fx has 5 rows, 4 in the approved plan']);
    expect(inputChanges([fx], [{ ...fx, definition: 'dx' }])).toEqual(['table app.fx has a new shape']);
    expect(inputChanges([fn], [{ ...fn, definition: 'f2' }])).toEqual(['function app.rate_for(text) has a new definition']);
    expect(inputChanges([fx, fn], [fx])).toEqual(['function app.rate_for(text) no longer exists']);
    expect(inputChanges([fn], [fn, { ...fn, name: 'app.rate_for(character varying)' }])).toEqual([
      'function app.rate_for(character varying) appeared (an overload or a shadowing relation)',
    ]);
    expect(inputChanges([fx], [{ name: 'app.fx', kind: 'table', definition: 'd1', uncovered: 'about 200000 rows' }])).toEqual([
      'table app.fx grew past 100000 rows (about 200000 rows)',
    ]);
  });
});

describe('saved plans', () => {
  const partitions = [
    { id: 'day:2024-03-01', ordinal: 0, bounds: { lo: '2024-03-01', hi: '2024-03-02' } },
    { id: 'day:2024-03-02', ordinal: 1, bounds: { lo: '2024-03-02', hi: '2024-03-03' } },
  ] as never[];
  const plan: SavedPlan = {
    format: PLAN_FORMAT,
    name: 'orders-usd',
    specHash: 'a'.repeat(64),
    transform: { name: 't', version: 1, kind: 'sql', codeHash: 'b'.repeat(64) },
    database: { variable: 'DATABASE_URL', identity: '1:2', serverVersion: 'PostgreSQL 17.5' },
    partitions: summarizePartitions(partitions),
    inputs: [fx],
    planned: { at: '2026-12-01T00:00:00Z', by: 'alice', engine: 'backfill 0.1.0' },
  };

  test('the same plan has no differences, whoever made it when', () => {
    expect(planDifferences(plan, { ...plan, planned: { at: 'later', by: 'bob', engine: 'backfill 0.1.0' } })).toEqual([]);
  });

  test('the partition digest covers ids and bounds in order', () => {
    const moved = summarizePartitions([partitions[0], { ...(partitions[1] as object), bounds: { lo: '2024-03-02', hi: '2024-03-04' } }] as never[]);
    expect(moved.count).toBe(2);
    expect(moved.digest).not.toBe(plan.partitions.digest);
    expect(planDifferences(plan, { ...plan, partitions: moved })).toEqual([
      'the 2 partitions have other bounds than the approved ones (day:2024-03-01 … day:2024-03-02 now, day:2024-03-01 … day:2024-03-02 approved)',
    ]);
    expect(planDifferences(plan, { ...plan, partitions: summarizePartitions([partitions[0]]) })[0]).toMatch(/^the plan has 1 partitions now, 2 approved/);
  });

  test('a code change is named once, with the bundled files, not also as a spec change', () => {
    const now = {
      ...plan,
      specHash: 'c'.repeat(64),
      transform: { ...plan.transform, kind: 'module' as const, codeHash: 'd'.repeat(64), bundled: ['rate.ts', 'transform.ts'] },
    };
    expect(planDifferences(plan, now)).toEqual([
      `the transform's code changed: ${'b'.repeat(12)} approved, ${'d'.repeat(12)} now (bundled from rate.ts, transform.ts)`,
    ]);
  });

  test('spec, inputs, database and server each named', () => {
    const now: SavedPlan = {
      ...plan,
      specHash: 'e'.repeat(64),
      inputs: [{ ...fx, content: 'c9' }],
      database: { variable: 'DATABASE_URL', identity: '9:9', serverVersion: 'PostgreSQL 17.6' },
    };
    expect(planDifferences(plan, now)).toEqual([
      `the spec changed: hash ${'a'.repeat(12)} approved, ${'e'.repeat(12)} now`,
      'input table app.fx has rows with other values',
      'the database is another one: the plan was made against 1:2, DATABASE_URL now reaches 9:9',
      'the PostgreSQL server changed version: PostgreSQL 17.5 approved, PostgreSQL 17.6 now',
    ]);
  });
});
