import { completenessProblems, type LedgerPartition } from '../../src/ledger/completeness';

const range = (ordinal: number, lo: number, hi: number, over: Partial<LedgerPartition> = {}): LedgerPartition => ({
  partition_id: `p${ordinal}`,
  ordinal,
  bounds: { kind: 'range', column: 'id', lo: String(lo), hi: String(hi) },
  status: 'succeeded',
  completions: 1,
  ...over,
});

describe('the completeness proof', () => {
  test('holds for contiguous partitions, each completed once, with one NULL partition', () => {
    const nulls: LedgerPartition = { partition_id: 'id:null', ordinal: 2, bounds: { kind: 'null', column: 'id' }, status: 'succeeded', completions: 1 };
    expect(completenessProblems(3, [range(0, 0, 10), range(1, 10, 20), nulls])).toEqual([]);
  });

  test.each([
    [
      'a missing partition',
      3,
      [range(0, 0, 10), range(2, 20, 30)],
      [
        'the ledger holds 2 partitions but the plan had 3',
        'partition p2 is number 2 of the plan where 1 was expected (a partition is missing before it)',
        'partition p2 starts at 20 but the one before it ends at 10: a gap',
      ],
    ],
    ['an overlap', 2, [range(0, 0, 12), range(1, 10, 20)], ['partition p1 starts at 10 but the one before it ends at 12: an overlap']],
    ['a partition completed twice', 2, [range(0, 0, 10, { completions: 2 }), range(1, 10, 20)], ['partition p0 completed 2 times']],
    [
      'a list value covered twice',
      2,
      [
        { partition_id: 'a', ordinal: 0, bounds: { kind: 'list', column: 't', value: 'x' }, status: 'succeeded', completions: 1 },
        { partition_id: 'b', ordinal: 1, bounds: { kind: 'list', column: 't', value: 'x' }, status: 'succeeded', completions: 1 },
      ],
      ['partition b repeats a value another partition covers'],
    ],
  ] as [string, number, LedgerPartition[], string[]][])('fails for %s', (_label, planned, partitions, problems) => {
    expect(completenessProblems(planned, partitions)).toEqual(problems);
  });

  test('ranges by count tile every value: open ends, each starting where the one before ends', () => {
    const span = (ordinal: number, lo: string | null, hi: string | null): LedgerPartition => ({
      partition_id: `id~${ordinal}`,
      ordinal,
      bounds: { kind: 'span', column: 'id', lo, hi },
      status: 'succeeded',
      completions: 1,
    });
    expect(completenessProblems(3, [span(0, null, 'b'), span(1, 'b', 'k'), span(2, 'k', null)])).toEqual([]);
    expect(completenessProblems(2, [span(0, 'a', 'b'), span(1, 'c', null)])).toEqual([
      'partition id~0 leaves the lowest values without a partition',
      'partition id~1 does not start where the one before it ends: a gap or an overlap',
    ]);
  });
});
