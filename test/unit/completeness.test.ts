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

  test('the pieces of a cut leaf tile it: adjacent, open at its ends, each starting where the one before ends; a whole leaf once', () => {
    const leaf = (ordinal: number, name: string, split?: [string | null, string | null, number]): LedgerPartition => ({
      partition_id: `leaf:${name}${split ? `~${split[2]}` : ''}`,
      ordinal,
      bounds: {
        kind: 'leaf',
        column: 'at',
        leaf: name,
        constraint: 'c',
        ...(split ? { split: { column: 'id', lo: split[0], hi: split[1], piece: split[2] } } : {}),
      },
      status: 'succeeded',
      completions: 1,
    });
    expect(completenessProblems(4, [leaf(0, 'a', [null, '5', 1]), leaf(1, 'a', ['5', '9', 2]), leaf(2, 'a', ['9', null, 3]), leaf(3, 'b')])).toEqual([]);
    expect(completenessProblems(3, [leaf(0, 'a', ['1', '5', 1]), leaf(1, 'a', ['6', '9', 2]), leaf(2, 'b')])).toEqual([
      'partition leaf:a~1 leaves the lowest keys of leaf a without a partition',
      'partition leaf:a~2 leaves the highest keys of leaf a without a partition',
      'partition leaf:a~2 does not start where the one before it in leaf a ends: a gap or an overlap',
    ]);
    expect(completenessProblems(3, [leaf(0, 'a', [null, '5', 1]), leaf(1, 'b'), leaf(2, 'a', ['5', null, 2])])).toEqual([
      'partition leaf:a~1 leaves the highest keys of leaf a without a partition',
      'partition leaf:a~2 repeats leaf a',
      'partition leaf:a~2 leaves the lowest keys of leaf a without a partition',
    ]);
    expect(completenessProblems(2, [leaf(0, 'a'), leaf(1, 'a', [null, null, 1])])).toEqual([
      'partition leaf:a~1 cuts leaf a, which the partition before it holds whole',
    ]);
  });

  describe('partitions split while running (limits.splitTail)', () => {
    /** Part of planned partition p1 (keys 10..20): the keys after `after` through `through`. */
    const part = (id: string, ordinal: number, after: string | null, through: string | null, from: string | null): LedgerPartition => ({
      ...range(ordinal, 10, 20),
      partition_id: id,
      bounds: { kind: 'range', column: 'id', lo: '10', hi: '20', stretch: { after, through } },
      split_from: from,
    });
    const planned = [range(0, 0, 10), range(2, 20, 30)];
    // p1 cut at key 14, then the part cut off (p1+1) cut at key 17
    const cut = [part('p1', 1, null, '14', null), part('p1+1', 3, '14', '17', 'p1'), part('p1+1+1', 4, '17', null, 'p1+1')];

    test('count as the planned partition they were cut from once their parts cover its keys exactly once', () => {
      expect(completenessProblems(3, [...planned, ...cut])).toEqual([]);
    });

    test('fail with a part missing (a gap), naming the part whose origin is gone', () => {
      expect(completenessProblems(3, [...planned, cut[0], cut[2]])).toEqual([
        'partition p1+1+1 was split from p1+1, which the ledger does not hold',
        'partition p1 and the partitions split from it do not cover its keys exactly once: a gap or an overlap between the parts',
      ]);
    });

    test.each([
      ['a part repeated (an overlap)', [...cut, part('p1+2', 5, '14', '17', 'p1')]],
      ['no part reaching the last key', [cut[0], part('p1+1', 3, '14', '17', 'p1')]],
    ] as [string, LedgerPartition[]][])('fail with %s', (_label, parts) => {
      expect(completenessProblems(3, [...planned, ...parts])).toEqual([
        'partition p1 and the partitions split from it do not cover its keys exactly once: a gap or an overlap between the parts',
      ]);
    });

    test('a part cut from a partition the ledger does not hold is named', () => {
      expect(completenessProblems(3, [...planned, cut[0], part('p1+1', 3, '14', null, 'p9')])).toEqual([
        'partition p1+1 was split from p9, which the ledger does not hold',
        'partition p1 and the partitions split from it do not cover its keys exactly once: a gap or an overlap between the parts',
      ]);
    });

    test('each part completes once, like any partition', () => {
      expect(completenessProblems(3, [...planned, cut[0], { ...cut[1], completions: 2 }, cut[2]])).toEqual(['partition p1+1 completed 2 times']);
    });
  });
});

describe('the completeness proof of a subset of the plan', () => {
  // the ledger's partitions renumbered 0.. in plan order, as a subset run registers them
  const at = (ordinal: number, planOrdinal: number, lo: number, hi: number, over: Partial<LedgerPartition> = {}) =>
    range(ordinal, lo, hi, { partition_id: `p${planOrdinal}`, ...over });
  const subset = (planOrdinals: number[], lastBoundedPlace = 9) => ({
    partitions: planOrdinals.map((o) => ({ id: `p${o}`, planOrdinal: o })),
    lastBoundedPlace,
  });

  test('partitions that are not neighbours in the plan: complete, no gap claimed between them', () => {
    const ledger = [at(0, 1, 10, 20), at(1, 4, 40, 50), at(2, 5, 50, 60)];
    expect(completenessProblems(3, ledger, subset([1, 4, 5]))).toEqual([]);
    // the same ledger as a run of the whole plan has a real gap
    expect(completenessProblems(3, ledger)).toEqual(['partition p4 starts at 40 but the one before it ends at 20: a gap']);
  });

  test('neighbours in the plan must still meet', () => {
    expect(completenessProblems(2, [at(0, 4, 40, 50), at(1, 5, 52, 60)], subset([4, 5]))).toEqual([
      'partition p5 starts at 52 but the one before it ends at 50: a gap',
    ]);
  });

  test('a partition of the subset missing from the ledger, or one the subset does not hold, is named', () => {
    expect(completenessProblems(2, [at(0, 1, 10, 20), at(1, 3, 30, 40)], subset([1, 4]))).toEqual([
      "partition p4 of the run's subset is not in the ledger",
      "partition p3 is in the ledger but not in the run's subset",
    ]);
  });

  test("a span subset: the plan's open ends are claimed only where the subset reaches them", () => {
    const span = (ordinal: number, planOrdinal: number, lo: string | null, hi: string | null): LedgerPartition => ({
      partition_id: `p${planOrdinal}`,
      ordinal,
      bounds: { kind: 'span', column: 'id', lo, hi },
      status: 'succeeded',
      completions: 1,
    });
    expect(completenessProblems(2, [span(0, 2, 'c', 'e'), span(1, 3, 'e', 'g')], subset([2, 3], 5))).toEqual([]);
    expect(completenessProblems(2, [span(0, 0, 'a', 'c'), span(1, 5, 'x', null)], subset([0, 5], 5))).toEqual([
      'partition p0 leaves the lowest values without a partition',
    ]);
  });
});
