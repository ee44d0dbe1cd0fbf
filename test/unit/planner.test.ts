import { DateTime } from 'luxon';
import { addUnits, planPartitions as planResolved, PlanError, startOfUnit, type SourceFacts } from '../../src/compiler/plan-partitions';
import { resolvePartition } from '../../src/specs/resolve';
import type { PartitionSpec } from '../../src/specs/schema';

/** Partitions as a spec writes them, resolved as the planner's callers resolve them. */
const planPartitions = (partition: PartitionSpec, facts: SourceFacts) => planResolved(resolvePartition(partition), facts);

describe('planPartitions', () => {
  test('range partitions are aligned to multiples of size, half-open, and ids carry their bounds', () => {
    const plan = planPartitions({ by: 'range', column: 'id', size: 100000 }, { kind: 'range', min: '150001', max: '300000', hasNulls: false });
    expect(plan).toEqual([
      { id: 'id:000100000-000200000', ordinal: 0, bounds: { kind: 'range', column: 'id', lo: '100000', hi: '200000' } },
      { id: 'id:000200000-000300000', ordinal: 1, bounds: { kind: 'range', column: 'id', lo: '200000', hi: '300000' } },
      { id: 'id:000300000-000400000', ordinal: 2, bounds: { kind: 'range', column: 'id', lo: '300000', hi: '400000' } },
    ]);
  });

  test('range partitions stay exact beyond 2^53 and for negative keys', () => {
    const big = planPartitions({ by: 'range', column: 'id', size: 10 }, { kind: 'range', min: '9007199254740993', max: '9007199254741001', hasNulls: false });
    expect(big.map((p) => p.id)).toEqual(['id:9007199254740990-9007199254741000', 'id:9007199254741000-9007199254741010']);
    const negative = planPartitions({ by: 'range', column: 'k', size: 10 }, { kind: 'range', min: '-15', max: '-1', hasNulls: false });
    expect(negative.map((p) => p.bounds)).toEqual([
      { kind: 'range', column: 'k', lo: '-20', hi: '-10' },
      { kind: 'range', column: 'k', lo: '-10', hi: '0' },
    ]);
  });

  test('a column with NULLs gets a NULL partition, so no row in scope falls outside every partition', () => {
    const plan = planPartitions({ by: 'range', column: 'shard', size: 5 }, { kind: 'range', min: '0', max: '4', hasNulls: true });
    expect(plan.map((p) => p.id)).toEqual(['shard:000000000-000000005', 'shard:null']);
  });

  test('an empty source plans no partitions', () => {
    expect(planPartitions({ by: 'time', column: 'at', size: '1 day' }, { kind: 'time', min: null, max: null, hasNulls: false })).toEqual([]);
  });

  test('time partitions cover whole days in UTC from the first to the last row', () => {
    const plan = planPartitions(
      { by: 'time', column: 'created_at', size: '1 day' },
      { kind: 'time', min: '2024-02-28T13:00:00.000Z', max: '2024-03-01T00:00:00.000Z', hasNulls: false },
    );
    expect(plan.map((p) => [p.id, p.bounds])).toEqual([
      ['day:2024-02-28', { kind: 'time', column: 'created_at', lo: '2024-02-28T00:00:00.000Z', hi: '2024-02-29T00:00:00.000Z' }],
      ['day:2024-02-29', { kind: 'time', column: 'created_at', lo: '2024-02-29T00:00:00.000Z', hi: '2024-03-01T00:00:00.000Z' }],
      ['day:2024-03-01', { kind: 'time', column: 'created_at', lo: '2024-03-01T00:00:00.000Z', hi: '2024-03-02T00:00:00.000Z' }],
    ]);
  });

  test('month and hour partitions follow the calendar', () => {
    const months = planPartitions(
      { by: 'time', column: 't', size: '1 month' },
      { kind: 'time', min: '2024-01-31T10:00:00Z', max: '2024-03-02T00:00:00Z', hasNulls: false },
    );
    expect(months.map((p) => p.id)).toEqual(['month:2024-01', 'month:2024-02', 'month:2024-03']);
    const hours = planPartitions(
      { by: 'time', column: 't', size: '6 hours' },
      { kind: 'time', min: '2024-01-01T05:59:00Z', max: '2024-01-01T12:00:00Z', hasNulls: false },
    );
    expect(hours.map((p) => p.id)).toEqual(['hour:2024-01-01T05', 'hour:2024-01-01T11']);
  });

  test('list partitions use given values in order, or discovered values plus NULL; ids name places, never values', () => {
    const given = planPartitions({ by: 'list', column: 'tenant', values: [42, 'acme', 42] }, { kind: 'list', values: [], hasNulls: true });
    expect(given.map((p) => [p.id, p.bounds])).toEqual([
      ['tenant#000001', { kind: 'list', column: 'tenant', value: '42' }],
      ['tenant#000002', { kind: 'list', column: 'tenant', value: 'acme' }],
    ]);
    expect(planPartitions({ by: 'list', column: 'region' }, { kind: 'list', values: ['eu', 'us east/1'], hasNulls: true }).map((p) => p.id)).toEqual([
      'region#000001',
      'region#000002',
      'region:null',
    ]);
  });

  test('every list value gets its own partition id, however alike the values are', () => {
    // long values were once named by a 40-character prefix and a 32-bit hash, which can collide
    const values = Array.from({ length: 20_000 }, (_, i) => `${'customer-'.repeat(8)}${i}`);
    const ids = planPartitions({ by: 'list', column: 'k', values }, { kind: 'list', values: [], hasNulls: false }).map((p) => p.id);
    expect(new Set(ids).size).toBe(values.length);
    expect(ids.every((id) => !id.includes('customer'))).toBe(true);
  });

  test('the same spec and facts always give the same plan', () => {
    const facts = { kind: 'time' as const, min: '2024-01-01T00:00:00Z', max: '2024-02-01T00:00:00Z', hasNulls: true };
    const a = planPartitions({ by: 'time', column: 't', size: '1 week' }, facts);
    const b = planPartitions({ by: 'time', column: 't', size: '1 week' }, facts);
    expect(a).toEqual(b);
    expect(a[0].id).toBe('week:2024-01-01');
  });

  test('a size that would make too many partitions is refused with the field and the fix', () => {
    expect(() => planPartitions({ by: 'range', column: 'id', size: 1 }, { kind: 'range', min: '0', max: '1000000', hasNulls: false })).toThrow(
      new PlanError('partition.size', 'would make 1000001 partitions over id 0..1000000 (more than 100000); use a larger size'),
    );
  });

  test('startOfUnit and addUnits work in UTC', () => {
    const utc = (iso: string) => DateTime.fromISO(iso, { zone: 'UTC' });
    expect(startOfUnit(utc('2024-03-07T15:45:12Z'), 'week').toJSDate().toISOString()).toBe('2024-03-04T00:00:00.000Z');
    expect(addUnits(utc('2024-01-31T00:00:00Z'), 1, 'day').toJSDate().toISOString()).toBe('2024-02-01T00:00:00.000Z');
    expect(addUnits(utc('2024-01-31T00:00:00Z'), 1, 'month').toJSDate().toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  test('time partitions in a named zone follow its calendar: New York days across both DST switches are 23 and 25 hours', () => {
    const spring = planPartitions(
      { by: 'time', column: 'at', size: '1 day', timeZone: 'America/New_York' },
      { kind: 'time', min: '2024-03-09T12:00:00.000Z', max: '2024-03-11T12:00:00.000Z', hasNulls: false },
    );
    expect(spring.map((p) => [p.id, p.bounds])).toEqual([
      ['day:2024-03-09', { kind: 'time', column: 'at', lo: '2024-03-09T05:00:00.000Z', hi: '2024-03-10T05:00:00.000Z', timeZone: 'America/New_York' }],
      ['day:2024-03-10', { kind: 'time', column: 'at', lo: '2024-03-10T05:00:00.000Z', hi: '2024-03-11T04:00:00.000Z', timeZone: 'America/New_York' }],
      ['day:2024-03-11', { kind: 'time', column: 'at', lo: '2024-03-11T04:00:00.000Z', hi: '2024-03-12T04:00:00.000Z', timeZone: 'America/New_York' }],
    ]);
    const fall = planPartitions(
      { by: 'time', column: 'at', size: '1 day', timeZone: 'America/New_York' },
      { kind: 'time', min: '2024-11-03T12:00:00.000Z', max: '2024-11-03T12:00:00.000Z', hasNulls: false },
    );
    const b = fall[0].bounds as { lo: string; hi: string };
    expect((Date.parse(b.hi) - Date.parse(b.lo)) / 3_600_000).toBe(25);
    // ids name the zone's own day: a Tokyo day starts the evening before in UTC
    const tokyo = planPartitions(
      { by: 'time', column: 'at', size: '1 month', timeZone: 'Asia/Tokyo' },
      { kind: 'time', min: '2024-02-29T16:00:00.000Z', max: '2024-02-29T16:00:00.000Z', hasNulls: false },
    );
    expect(tokyo.map((p) => p.id)).toEqual(['month:2024-03']);
    expect(tokyo[0].bounds).toMatchObject({ lo: '2024-02-29T15:00:00.000Z', hi: '2024-03-31T15:00:00.000Z' });
  });

  test('range by count: ranges between the quantile cuts, open at both ends, named by place; a repeated cut is one', () => {
    const planned = planPartitions({ by: 'range', column: 'id', count: 4 }, { kind: 'quantiles', cuts: ['3f', '7a', '7a'], hasNulls: true });
    expect(planned.map((p) => [p.id, p.bounds])).toEqual([
      ['id~000001', { kind: 'span', column: 'id', lo: null, hi: '3f' }],
      ['id~000002', { kind: 'span', column: 'id', lo: '3f', hi: '7a' }],
      ['id~000003', { kind: 'span', column: 'id', lo: '7a', hi: null }],
      ['id:null', { kind: 'null', column: 'id' }],
    ]);
    expect(planPartitions({ by: 'range', column: 'id', count: 1 }, { kind: 'quantiles', cuts: [], hasNulls: false }).map((p) => p.bounds)).toEqual([
      { kind: 'span', column: 'id', lo: null, hi: null },
    ]);
  });

  test('native with rows: a big leaf is cut into key ranges open at its ends, named by leaf and place; a small leaf stays whole', () => {
    const facts = {
      kind: 'leaves' as const,
      splitColumn: 'id',
      leaves: [
        { name: 'public.ev_01', constraint: 'c1', cuts: ['100', '250', '250'] },
        { name: 'public.ev_02', constraint: 'c2', cuts: [] },
        { name: 'public.ev_default', constraint: 'cd' },
      ],
    };
    const planned = planPartitions({ by: 'native', column: 'at', rows: 5000 }, facts);
    expect(planned.map((p) => [p.ordinal, p.id, p.bounds])).toEqual([
      [
        0,
        'leaf:public.ev_01~001',
        { kind: 'leaf', column: 'at', leaf: 'public.ev_01', constraint: 'c1', split: { column: 'id', lo: null, hi: '100', piece: 1 } },
      ],
      [
        1,
        'leaf:public.ev_01~002',
        { kind: 'leaf', column: 'at', leaf: 'public.ev_01', constraint: 'c1', split: { column: 'id', lo: '100', hi: '250', piece: 2 } },
      ],
      [
        2,
        'leaf:public.ev_01~003',
        { kind: 'leaf', column: 'at', leaf: 'public.ev_01', constraint: 'c1', split: { column: 'id', lo: '250', hi: null, piece: 3 } },
      ],
      [3, 'leaf:public.ev_02', { kind: 'leaf', column: 'at', leaf: 'public.ev_02', constraint: 'c2' }],
      [4, 'leaf:public.ev_default', { kind: 'leaf', column: 'at', leaf: 'public.ev_default', constraint: 'cd' }],
    ]);
    const many = { ...facts, leaves: [{ name: 'public.big', constraint: 'c', cuts: Array.from({ length: 100_000 }, (_, i) => String(i).padStart(6, '0')) }] };
    expect(() => planPartitions({ by: 'native', column: 'at', rows: 1000 }, many)).toThrow(/partitions \(more than \d+\); use a larger rows/);
  });
});
