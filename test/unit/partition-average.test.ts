import { likelyLastChunk, rowsPerPartition, startsInGroups } from '../../src/domain/partition-average';

describe("the plan's average partition", () => {
  test('is rows planned over partitions, and unknown without a count or without partitions', () => {
    expect(rowsPerPartition(1_000, 4)).toBe(250);
    expect(rowsPerPartition(undefined, 4)).toBeUndefined();
    expect(rowsPerPartition(null, 4)).toBeUndefined();
    expect(rowsPerPartition(1_000, 0)).toBeUndefined();
    expect(rowsPerPartition(0, 3)).toBe(0); // an empty plan is a count, not an unknown
  });

  test('a chunk is likely the last when what is left of an average partition fits in it', () => {
    // 12,000 rows in 4 partitions: 3,000 each
    expect(likelyLastChunk(12_000, 4, 0, 5_000)).toBe(true);
    expect(likelyLastChunk(12_000, 4, 0, 3_000)).toBe(false); // exactly a chunk left: a second, empty chunk may follow
    expect(likelyLastChunk(12_000, 4, 0, 1_000)).toBe(false);
    expect(likelyLastChunk(12_000, 4, 2_500, 1_000)).toBe(true);
    // a partition larger than the average, read past it: still likely last
    expect(likelyLastChunk(12_000, 4, 9_000, 1_000)).toBe(true);
    expect(likelyLastChunk(undefined, 4, 0, 1_000_000)).toBe(false);
  });

  test('the run starts partitions in groups where there are 40 or more of a chunk or two on average; the plan guesses the same', () => {
    expect(startsInGroups(40 * 2_000, 40, 1_000)).toBe(true);
    expect(startsInGroups(40 * 2_001, 40, 1_000)).toBe(false); // more than two chunks on average
    expect(startsInGroups(39 * 10, 39, 1_000)).toBe(false); // too few partitions
    expect(startsInGroups(undefined, 365, 1_000)).toBe(false); // no row count
  });
});
