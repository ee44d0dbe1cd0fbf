import { smallPartitionWarning } from '../../src/preflight/partition-size';

describe('smallPartitionWarning', () => {
  test('hourly partitions of the demo: warns, and suggests a size that keeps the slots busy', () => {
    const warning = smallPartitionWarning(1_160_000, 2184, 6);
    expect(warning).toMatch(/about 531 source rows per partition on average \(2,184 partitions/);
    expect(warning).toMatch(/partition\.size about 91× larger/);
  });

  test('day partitions of the demo (about 12,700 rows each): no warning', () => {
    expect(smallPartitionWarning(1_160_000, 91, 6)).toBeUndefined();
  });

  test('few partitions finish quickly however small: no warning', () => {
    expect(smallPartitionWarning(1_000, 49, 4)).toBeUndefined();
  });

  test('a larger size would starve the concurrency slots: capped, or no warning at all', () => {
    expect(smallPartitionWarning(100 * 60, 100, 20)).toBeUndefined();
    expect(smallPartitionWarning(400 * 100, 400, 10)).toMatch(/about 10× larger/);
  });

  test('a source never analyzed has no estimate: no warning', () => {
    expect(smallPartitionWarning(0, 5000, 4)).toBeUndefined();
  });
});
